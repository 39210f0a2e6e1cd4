// ---- MCP-B page servers: the in-page proxy client ------------------------
//
// A site built the MCP-B way runs a full MCP server in the page
// (@mcp-b/transports TabServerTransport, or IframeChildTransport inside an
// iframe). Its wire (checked against @mcp-b/transports 5.1.0) is
// window.postMessage of
//   {channel, type: 'mcp', direction: 'client-to-server' | 'server-to-client', payload}
// where payload is a JSON-RPC message or one of the strings
// 'mcp-check-ready' (client asks), 'mcp-server-ready' (server answers, and
// says so when it starts) and 'mcp-server-stopped' (server closes). The
// same-window server posts to its own window with targetOrigin '*' and
// accepts client messages whose event.source is its own window; an iframe
// server posts to window.parent and accepts messages whose source is its
// parent. The channel name is the site's choice ('mcp-default' and
// 'mcp-iframe' by default), so servers are discovered by their ready
// message on any channel.
//
// This shim is the client end of that wire only: it relays raw messages.
// The MCP client session itself runs in Go (go-sdk) and reaches the shim
// through the bridge (mcpbTake and mcpbSend, at the end of bridge.js). The
// binding ping carries no data; Go pulls the queue when pinged.
//
// Hostile pages: a message counts only when event.source is this window
// or one of its direct child frames (the browser sets source and origin;
// the getters were captured before the page ran), its payload is a string
// of the three above or a JSON object under MCPB_MAX_MESSAGE characters,
// and it fits the rate and queue bounds. What is dropped is counted and
// reported to Go, which words the refusal.

const MCPB_MAX_MESSAGE = 1 << 20; // characters of JSON per message
const MCPB_MAX_QUEUED = 512; // messages waiting for Go (pageQueueMessages in cdp/pageserver.go)
const MCPB_MAX_QUEUED_CHARS = 8 << 20; // and their characters
const MCPB_MAX_SERVERS = 8; // page servers per document
const MCPB_RATE = 1000; // messages per second, per document, sustained
const MCPB_BURST = 2000; // and in a burst
const MCPB_DEFAULT_CHANNEL = 'mcp-default';
const MCPB_IFRAME_CHANNEL = 'mcp-iframe';

const MessageEventProto = G.MessageEvent.prototype;
const messageData = getter(MessageEventProto, 'data');
const messageSource = getter(MessageEventProto, 'source');
const messageOrigin = getter(MessageEventProto, 'origin');
const winPostMessage = G.postMessage;
const winLengthDesc = getOwnPropertyDescriptor(G, 'length');
const winLength = winLengthDesc && winLengthDesc.get;
const DateNow = Date.now;
// perfNow times a call: a Go call's execution (bridge.js), a page server's
// tools/call (mcpbTimed).
const perfNow = ReflectApply(FnBind, G.performance.now, [G.performance]);
const MathFloor = Math.floor;
const setTimer = G.setTimeout;
const clearTimer = G.clearTimeout;

// The page servers' tools/call are timed, for traces (core.Result.PageTook):
// from posting the request to the server (mcpbPost) to the arrival of its
// answer (mcpbOnMessage), by the page's clock. The time goes back in the
// answer, as result._meta[MCPB_TOOK_KEY] in microseconds, which Go takes out
// before anyone sees the result (pageTook in hub/mcpserver/pageserver.go).
// Only when Go asks (timed: traces are on), as for the polyfill's calls.
const MCPB_TOOK_KEY = 'webmcp-cdp/pageTookUs';
const MCPB_MAX_TIMED = 256; // calls timed at once: unanswered ones are dropped past it
const mcpbTimed = new SafeMap(); // server id + ' ' + JSON of the request id -> perfNow() at the post

// id -> {id, channel, win, origin, kind: 'tab' | 'iframe'}
const mcpbServers = new SafeMap();
const mcpbFrameIds = new SafeWeakMap(); // child window -> its number here
let mcpbFrameSeq = 0;
let mcpbQueue = [];
let mcpbQueuedChars = 0;
let mcpbPinged = false;
let mcpbTokens = MCPB_BURST;
let mcpbRefill = DateNow();
// Counts of what was dropped since Go last took the queue, by reason.
let mcpbDropped = { __proto__: null };

function mcpbDrop(reason) {
  mcpbDropped[reason] = (mcpbDropped[reason] || 0) + 1;
  mcpbPing();
}

// Go's standing wait (mcpbWaitQueue), or null: while Go waits, a message
// resolves the wait at once instead of pinging (one CDP answer on the
// path back, as for a WebMCP call).
let mcpbWaiter = null;
// Go's send of a request that waits a moment for what comes next
// (mcpbSendHold), or null: it takes the queue before the standing wait, so
// the answer comes back with the send's own CDP answer (one round trip per
// call, and the standing wait stays armed).
let mcpbHold = null;
// Every take is numbered, so Go delivers in order what comes back through
// different calls.
let mcpbTakeSeq = 0;

function mcpbPing() {
  if (mcpbHold) {
    const h = mcpbHold;
    mcpbHold = null;
    call(clearTimer, G, h.timer);
    h.resolve(mcpbTakeQueue(h.maxChars, 'ok'));
    if (mcpbQueue.length === 0) return;
  }
  if (mcpbWaiter) {
    const w = mcpbWaiter;
    mcpbWaiter = null;
    w.resolve(mcpbTakeQueue(w.maxChars));
    return;
  }
  if (!ping) takeBinding();
  if (mcpbPinged || !ping) return;
  mcpbPinged = true;
  try { ping('mcpb'); } catch { /* context going away */ }
}

const mcpbSize = (e) => (e.d === undefined ? 64 + (e.channel === undefined ? 0 : e.channel.length) : e.d.length + 32);

function mcpbEnqueue(entry) {
  const size = mcpbSize(entry);
  if (mcpbQueue.length >= MCPB_MAX_QUEUED || mcpbQueuedChars + size > MCPB_MAX_QUEUED_CHARS) {
    mcpbDrop('queue');
    return;
  }
  ArrayPush(mcpbQueue, entry);
  mcpbQueuedChars += size;
  mcpbPing();
}

// mcpbAllow takes a token of the document's message budget.
function mcpbAllow() {
  const now = DateNow();
  mcpbTokens += (now - mcpbRefill) * MCPB_RATE / 1000;
  if (mcpbTokens > MCPB_BURST) mcpbTokens = MCPB_BURST;
  mcpbRefill = now;
  if (mcpbTokens < 1) return false;
  mcpbTokens--;
  return true;
}

// The kind of window a message came from: 'tab' for this window, 'iframe'
// for one of its direct child frames, null for any other (a parent, an
// opener, a grandchild, or none).
function mcpbKindOf(src) {
  if (src === G) return 'tab';
  if (src === null || src === undefined) return null;
  let n = 0;
  try { n = winLength ? call(winLength, G) : 0; } catch { return null; }
  for (let i = 0; i < n && i < MAX_WINDOWS; i++) {
    let child = null;
    try { child = G[i]; } catch { /* gone */ }
    if (child === src) return 'iframe';
  }
  return null;
}

function mcpbIdOf(kind, src, channel) {
  if (kind === 'tab') return 't:' + channel;
  let n = mcpbFrameIds.get(src);
  if (n === undefined) {
    n = ++mcpbFrameSeq;
    mcpbFrameIds.set(src, n);
  }
  return 'f' + n + ':' + channel;
}

function mcpbOnMessage(ev) {
  let data, src, origin;
  try {
    data = call(messageData, ev);
    src = call(messageSource, ev);
    origin = call(messageOrigin, ev);
  } catch { return; }
  // The cheap test first: most messages of a page are not MCP-B's.
  if (!isObject(data) || !hasOwn(data, 'type') || data.type !== 'mcp' ||
      !hasOwn(data, 'direction') || data.direction !== 'server-to-client') return;
  const kind = mcpbKindOf(src);
  if (kind === null) { mcpbDrop('source'); return; }
  const channel = hasOwn(data, 'channel') ? data.channel : undefined;
  if (typeof channel !== 'string' || channel.length === 0 || channel.length > 128) { mcpbDrop('malformed'); return; }
  if (!mcpbAllow()) { mcpbDrop('rate'); return; }
  const payload = hasOwn(data, 'payload') ? data.payload : undefined;
  const id = mcpbIdOf(kind, src, channel);
  const known = mcpbServers.get(id);
  if (payload === 'mcp-server-ready') {
    if (known) return; // an answer to someone's check-ready
    if (mcpbServers.size >= MCPB_MAX_SERVERS) { mcpbDrop('servers'); return; }
    mcpbServers.set(id, { __proto__: null, id, channel, win: src, origin, kind });
    mcpbEnqueue({ __proto__: null, t: 'ready', s: id, channel, kind, origin: StringSlice(StringCtor(origin), 0, 256) });
    return;
  }
  if (!known) return; // not a server that said it is ready
  if (known.origin !== origin) { mcpbDrop('origin'); return; } // the frame navigated
  if (payload === 'mcp-server-stopped') {
    mcpbServers.delete(id);
    mcpbEnqueue({ __proto__: null, t: 'stopped', s: id });
    return;
  }
  if (!isObject(payload) || isArray(payload)) { mcpbDrop('malformed'); return; }
  let text;
  try { text = JSONstringify(mcpbWithTime(id, payload)); } catch { mcpbDrop('malformed'); return; }
  if (typeof text !== 'string') { mcpbDrop('malformed'); return; }
  if (text.length > MCPB_MAX_MESSAGE) {
    mcpbDrop('size');
    const answer = mcpbTooLarge(payload, text.length);
    if (answer !== undefined) mcpbEnqueue({ __proto__: null, t: 'msg', s: id, d: answer });
    return;
  }
  mcpbEnqueue({ __proto__: null, t: 'msg', s: id, d: text });
}

// mcpbTooLarge returns, for an answer of the server over MCPB_MAX_MESSAGE
// characters, an error answer to the same request that says so (JSON), so
// that Go's request fails at once and says why rather than waiting for an
// answer that was dropped; undefined for a message that answers nothing.
function mcpbTooLarge(payload, length) {
  if (!hasOwn(payload, 'id') || hasOwn(payload, 'method')) return undefined;
  const rid = payload.id;
  if (!(typeof rid === 'number' || (typeof rid === 'string' && rid.length <= 128))) return undefined;
  return JSONstringify({ __proto__: null, jsonrpc: '2.0', id: rid, error: { __proto__: null, code: -32603,
    message: `the page server's answer is ${length} characters of JSON, over the limit of ${MCPB_MAX_MESSAGE} per message; it was dropped` } });
}

// mcpbWithTime returns the answer to a timed tools/call (mcpbTimed) with
// the time it took in its result's _meta: a copy, so the page's own objects
// are not changed. Anything else, and an error answer, is returned as it is.
// (A server's own MCPB_TOOK_KEY in _meta is overwritten by ours.)
function mcpbWithTime(id, payload) {
  if (mcpbTimed.size === 0 || !hasOwn(payload, 'id') || hasOwn(payload, 'method')) return payload;
  const key = id + ' ' + JSONstringify(payload.id);
  const t0 = mcpbTimed.get(key);
  if (t0 === undefined) return payload;
  mcpbTimed.delete(key);
  const r = hasOwn(payload, 'result') ? payload.result : undefined;
  if (!isObject(r) || isArray(r)) return payload;
  const m = hasOwn(r, '_meta') ? r._meta : undefined;
  const meta = { __proto__: null, ...(isObject(m) && !isArray(m) ? m : undefined), [MCPB_TOOK_KEY]: MathFloor((perfNow() - t0) * 1000) };
  return { __proto__: null, ...payload, result: { __proto__: null, ...r, _meta: meta } };
}

// Capture phase on the window, registered before any script of the page:
// the page cannot stop the event before this listener sees it.
call(addListener, G, 'message', mcpbOnMessage, true);

// Ask a same-window server on the default channel, and the servers of the
// child frames on theirs, whether they are there. Other channels answer
// only when asked on their own name, so they are found when they start.
// Asked only in a document this script came into late (startedBefore:
// attach mode), where a server may have started before this listener. In a
// new document none can have, and a server that starts later says so
// itself (TabServerTransport and IframeChildTransport post
// 'mcp-server-ready' when they start); asking anyway posts a message the
// page and its frames see, and a page's own one-shot 'message' listener
// would take it for its own (WPT's unregister-during-executeTool-cross-origin
// timed out so, on both backends).
function mcpbCheckReady() {
  const ask = (channel) => ({ __proto__: null, channel, type: 'mcp', direction: 'client-to-server', payload: 'mcp-check-ready' });
  try {
    call(winPostMessage, G, ask(MCPB_DEFAULT_CHANNEL), ORIGIN === 'null' ? '*' : ORIGIN);
  } catch { /* the window is going away */ }
  let n = 0;
  try { n = winLength ? call(winLength, G) : 0; } catch { return; }
  for (let i = 0; i < n && i < MAX_WINDOWS; i++) {
    // Only the words "mcp-check-ready" go out, so any origin may read them.
    try { G[i].postMessage(ask(MCPB_IFRAME_CHANNEL), '*'); } catch { /* gone */ }
  }
}
if (startedBefore) mcpbCheckReady();
call(addListener, G, 'load', () => {
  if (startedBefore) mcpbCheckReady();
  // In a new tab the binding can come after the first messages: say so now.
  if (mcpbQueue.length > 0 && !mcpbPinged) mcpbPing();
}, { once: true });

// A new document in this window starts with no servers.
ArrayPush(onNewDocument, () => {
  mcpbServers.forEach((s) => { mcpbEnqueue({ __proto__: null, t: 'stopped', s: s.id }); });
  mcpbServers.clear();
});

// mcpbTakeQueue hands Go the waiting messages, at most maxChars of them
// (at least one), with the counts of dropped messages. more says that
// messages are still waiting; seq numbers the take; status is the send's
// that took it (mcpbSendHold), if any.
function mcpbTakeQueue(maxChars, status) {
  const out = [];
  defineProperty(out, 'toJSON', { value: undefined });
  let chars = 0;
  let i = 0;
  for (; i < mcpbQueue.length; i++) {
    const e = mcpbQueue[i];
    const size = mcpbSize(e);
    if (i > 0 && chars + size > maxChars) break;
    chars += size;
    ArrayPush(out, e);
  }
  const rest = [];
  for (let j = i; j < mcpbQueue.length; j++) ArrayPush(rest, mcpbQueue[j]);
  mcpbQueue = rest;
  mcpbQueuedChars = rest.length === 0 ? 0 : mcpbQueuedChars - chars;
  const dropped = mcpbDropped;
  mcpbDropped = { __proto__: null };
  // A message queued after this take pings again.
  mcpbPinged = rest.length > 0;
  return JSONstringify({ __proto__: null, status, msgs: out, dropped, more: rest.length > 0, seq: ++mcpbTakeSeq });
}

// mcpbWaitQueue resolves with the queue (as mcpbTakeQueue) as soon as it
// holds anything: at once when it does now.
function mcpbWaitQueue(maxChars) {
  if (mcpbWaiter) {
    const old = mcpbWaiter;
    mcpbWaiter = null;
    old.resolve(mcpbTakeQueue(old.maxChars));
  }
  if (mcpbQueue.length > 0 || ObjectKeys(mcpbDropped).length > 0) return PromiseResolve(mcpbTakeQueue(maxChars));
  return new PromiseCtor((resolve) => { mcpbWaiter = { __proto__: null, resolve, maxChars }; });
}

// mcpbSendHold posts a request (as mcpbPost) and resolves, as JSON, with
// {status} and, when something comes from a server within holdMs (the
// answer, as a rule), the take of it (as mcpbTakeQueue). A newer send's
// hold ends the older one's.
function mcpbSendHold(id, text, maxChars, holdMs, timed) {
  const status = mcpbPost(id, text, timed);
  if (status !== 'ok') return JSONstringify({ __proto__: null, status });
  if (mcpbHold) {
    const old = mcpbHold;
    mcpbHold = null;
    call(clearTimer, G, old.timer);
    old.resolve(JSONstringify({ __proto__: null, status: 'ok' }));
  }
  return new PromiseCtor((resolve) => {
    const h = { __proto__: null, resolve, maxChars, timer: 0 };
    h.timer = call(setTimer, G, () => {
      if (mcpbHold === h) mcpbHold = null;
      resolve(JSONstringify({ __proto__: null, status: 'ok' }));
    }, holdMs);
    mcpbHold = h;
  });
}

// mcpbPost sends a client-to-server message (JSON text from Go) to a
// server, on its channel, only to the origin that said it was ready;
// timed: a tools/call is timed (mcpbTimed).
function mcpbPost(id, text, timed) {
  const s = mcpbServers.get(StringCtor(id));
  if (!s) return 'gone';
  let payload;
  try { payload = JSONparse(StringCtor(text)); } catch { return 'bad'; }
  const msg = { __proto__: null, channel: s.channel, type: 'mcp', direction: 'client-to-server', payload };
  const t0 = perfNow();
  try {
    if (s.kind === 'tab') {
      call(winPostMessage, G, msg, ORIGIN === 'null' ? '*' : ORIGIN);
    } else {
      // A child window of another origin: its own postMessage is the
      // browser's (cross-origin properties cannot be replaced).
      s.win.postMessage(msg, s.origin === 'null' ? '*' : s.origin);
    }
  } catch {
    return 'gone';
  }
  if (timed && isObject(payload) && hasOwn(payload, 'id') && hasOwn(payload, 'method') && payload.method === 'tools/call') {
    if (mcpbTimed.size >= MCPB_MAX_TIMED) mcpbTimed.clear();
    mcpbTimed.set(s.id + ' ' + JSONstringify(payload.id), t0);
  }
  return 'ok';
}
