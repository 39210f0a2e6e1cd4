// ---- tools of other origins in this tab, relayed by Go ---------------------

// A document cannot reach the registry of a document of another origin (nor
// may it: only what that document exposed to this origin is its business).
// Go relays between them, with every origin taken from CDP, never from a
// page:
//   - bridge.list hands Go this document's exposed tools (exposedList) and
//     where its window sits in the tab (selfPath);
//   - Go pushes to each document the tools other origins exposed to it
//     (bridge.remote → setRemote), and toolchange fires when they change;
//   - getTools({fromOrigins}) lists them (forEachRemote), with the window
//     found from the top by that path;
//   - executeTool of such a tool queues a call for Go (runRemote; Go takes
//     the queue with bridge.xoTake after an "xo" ping), which runs it in the
//     tool's document (bridge.xoRun, checked there again) and answers with
//     bridge.xoDone; an abort queues a cancel the same way.
const XO_PING = 'xo';
const MAX_PATH = 32; // frame depth
const MAX_REMOTE_CALLS = 64; // calls of this document to other origins in flight
// What Go last pushed: [{key, origin, path, tools: [{name, title,
// description, schema, annotations}]}].
let remote = [];
// getTools({fromOrigins}) waits for Go's first push (a standalone copy has
// no Go to push).
let remoteSynced = NONCE === 'standalone';
let remoteWaiters = [];
const xoOut = []; // messages for Go: {t: 'call', id, key, origin, name, input} | {t: 'cancel', id}
const xoCalls = new SafeMap(); // id -> done(completion)
let xoSeq = 0;
const xoPing = pinger(XO_PING);
function pingXO() { xoPing.send(); }

// setRemote takes Go's push; toolchange fires here once it is in, when
// the tools changed (not only where their windows sit).
function setRemote(json, changed) {
  let v;
  try { v = JSONparse(json); } catch { return false; }
  if (!isArray(v)) return false;
  remote = v;
  if (!remoteSynced) {
    remoteSynced = true;
    const waiters = remoteWaiters;
    remoteWaiters = [];
    for (let i = 0; i < waiters.length; i++) tryCall(waiters[i]);
  }
  if (changed) queueTask(() => peer.notify());
  return true;
}

// whenRemote runs fn now, or once Go's first push is in when it matters
// (fromOrigins names other origins).
function whenRemote(fromOrigins, fn) {
  if (remoteSynced || fromOrigins.length === 0) return fn();
  ArrayPush(remoteWaiters, fn);
  return undefined;
}

// The window's own parent, read with the original getter: "parent" is
// [Replaceable], so the page may shadow it on its own window. (A
// cross-origin ancestor's properties are out of this page's reach, and a
// same-origin one's page is of this origin's trust.)
const parentDesc = getOwnPropertyDescriptor(G, 'parent');
const ownParent = parentDesc && parentDesc.get ? () => call(parentDesc.get, G) : () => G.parent;

// selfPath is where this window sits in the tab: the index in its parent's
// frames of each window from the top down to this one (null if unknown).
function selfPath() {
  const up = [];
  let w = G;
  for (let depth = 0; depth <= MAX_PATH; depth++) {
    let p;
    try { p = w === G ? ownParent() : w.parent; } catch { return null; }
    if (!p || p === w) break;
    if (depth === MAX_PATH) return null;
    let n = 0;
    try { n = p.length; } catch { return null; }
    let idx = -1;
    for (let i = 0; i < n && i < MAX_WINDOWS && idx < 0; i++) {
      try { if (p[i] === w) idx = i; } catch { /* gone */ }
    }
    if (idx < 0) return null;
    ArrayPush(up, idx);
    w = p;
  }
  const path = [];
  defineProperty(path, 'toJSON', { value: undefined });
  for (let i = up.length - 1; i >= 0; i--) ArrayPush(path, up[i]);
  return path;
}

// windowAt is the window at path from the top, or null.
function windowAt(path) {
  if (!isArray(path) || path.length > MAX_PATH) return null;
  let w;
  try { w = G.top; } catch { return null; }
  for (let i = 0; i < path.length && w; i++) {
    const idx = path[i];
    if (typeof idx !== 'number') return null;
    try { w = w[idx]; } catch { return null; }
  }
  return w || null;
}

// exposedList is what this document exposes to other origins, for
// bridge.list: at most maxTools tools, each within the size limits.
function exposedList(maxTools, maxDescription, maxSchema) {
  const out = [];
  defineProperty(out, 'toJSON', { value: undefined });
  if (policy !== 'allowed') return out;
  registry.forEach((e) => {
    if (!e.exposed || e.exposed.length === 0 || out.length >= maxTools) return;
    if (e.description.length > maxDescription || (e.schema !== undefined && e.schema.length > maxSchema)) return;
    const to = [];
    defineProperty(to, 'toJSON', { value: undefined });
    for (let i = 0; i < e.exposed.length && i < 32; i++) ArrayPush(to, e.exposed[i]);
    ArrayPush(out, {
      __proto__: null, name: e.name, title: e.title, description: e.description, schema: e.schema,
      annotations: e.annotations ? { __proto__: null, ...e.annotations } : undefined, to,
    });
  });
  return out;
}

// forEachRemote calls fn(tool, window, origin) for each tool Go pushed of
// an origin in fromOrigins whose window is still found.
function forEachRemote(fromOrigins, fn) {
  if (fromOrigins.length === 0) return;
  for (let i = 0; i < remote.length; i++) {
    const r = remote[i];
    if (!r || !ArrayIncludes(fromOrigins, r.origin) || !isArray(r.tools)) continue;
    const w = windowAt(r.path);
    if (!w) continue;
    for (let j = 0; j < r.tools.length; j++) tryCall(fn, r.tools[j], w, StringCtor(r.origin));
  }
}

// remoteKey is Go's key of the document of another origin whose window is
// w, of origin, and which exposed a tool named name to this document; null
// when there is none.
function remoteKey(w, origin, name) {
  for (let i = 0; i < remote.length; i++) {
    const r = remote[i];
    if (!r || r.origin !== origin || !isArray(r.tools) || windowAt(r.path) !== w) continue;
    for (let j = 0; j < r.tools.length; j++) {
      if (r.tools[j] && r.tools[j].name === name) return StringCtor(r.key);
    }
  }
  return null;
}

// runRemote asks Go to run the tool name of the document key (of origin);
// done receives its completion once. It returns the function that cancels
// the call.
function runRemote(key, origin, name, inputJSON, done) {
  if (xoCalls.size >= MAX_REMOTE_CALLS) {
    done({ ok: false, error: `more than ${MAX_REMOTE_CALLS} calls to tools of other origins are in flight` });
    return () => {};
  }
  const id = StringCtor(++xoSeq);
  xoCalls.set(id, done);
  ArrayPush(xoOut, { __proto__: null, t: 'call', id, key, origin, name, input: inputJSON });
  pingXO();
  return () => {
    if (!xoCalls.has(id)) return;
    ArrayPush(xoOut, { __proto__: null, t: 'cancel', id });
    pingXO();
  };
}

// xoTake hands Go at most max queued messages as JSON; a call whose input
// is over maxInput characters fails here instead.
function xoTake(max, maxInput) {
  const msgs = [];
  defineProperty(msgs, 'toJSON', { value: undefined });
  while (xoOut.length > 0 && msgs.length < max) {
    const m = ArrayShift(xoOut);
    if (m.t === 'call' && m.input.length > maxInput) {
      xoDone(m.id, JSONstringify({ __proto__: null, ok: false, error: `the input is ${m.input.length} characters of JSON, over the limit of ${maxInput}` }));
      continue;
    }
    ArrayPush(msgs, m);
  }
  return JSONstringify({ __proto__: null, msgs, more: xoOut.length > 0 });
}

// xoDone settles the call id with Go's answer (a completion as JSON).
function xoDone(id, json) {
  const done = xoCalls.get(StringCtor(id));
  if (!done) return;
  xoCalls.delete(StringCtor(id));
  let r;
  try { r = JSONparse(StringCtor(json)); } catch { r = null; }
  if (!isObject(r)) r = { ok: false, error: 'the relay gave no answer' };
  const out = { ok: r.ok === true, kind: StringCtor(r.kind), value: r.value === undefined ? undefined : StringCtor(r.value), error: StringCtor(r.error) };
  tryCall(done, out);
}

// xoAllowed says whether this document runs its tool name for a caller of
// callerOrigin (Go's word, from CDP).
function xoAllowed(name, callerOrigin) {
  const e = registry.get(name);
  return policy === 'allowed' && !!e && !!e.exposed && ArrayIncludes(e.exposed, callerOrigin);
}

// A window's realm is reused only by a document of the same origin
// (helpers.js, syncDoc), to which the same tools are exposed: remote stays.
ArrayPush(onNewDocument, () => {
  const ids = keysOf(xoCalls);
  for (let i = 0; i < ids.length; i++) xoDone(ids[i], '{"ok":false,"error":"the document was replaced"}');
});
