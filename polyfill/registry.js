// ---- the registry -------------------------------------------------------

// name -> entry. An entry is
//   {name, title (string|null), description, schema and outSchema (the
//    input and output schemas' JSON strings, or undefined), annotations
//    (the four draft booleans, or undefined),
//    hints (MCP annotations for Go, or undefined), exposed (origins),
//    face: "current" | "legacy" | "form", script (the number of the
//    userscript that registered it, or undefined),
//    execute (function) and thisArg, or form (the declarative state)}.
// With native WebMCP it holds only what Go would run through the bridge
// (nothing of the native API itself).
const registry = new SafeMap();

// pinger returns a ping of Go with payload, sent at most once per
// microtask (a page that registers 100 tools in a loop costs one ping and
// one read from Go), and a take that calls back a ping still queued: the
// read that came before it covers what it announced. If the binding is
// not there yet, each ping looks again.
function pinger(payload) {
  let queued = false;
  const send = () => {
    if (!ping) takeBinding();
    if (queued || !ping) return;
    queued = true;
    queueMicro(() => {
      if (!queued) return; // taken back, or sent by an earlier microtask
      queued = false;
      try { ping(payload); } catch { /* context going away */ }
    });
  };
  return { send, take: () => { queued = false; } };
}

// Changes of this document's tools: bridge.list takes back a ping its
// list covers (pingTaken).
const changedPing = pinger('changed');
function pingGo() { changedPing.send(); }
function pingTaken() { changedPing.take(); }

// changed announces a change of this document's tools: to Go, and with a
// toolchange event at every same-origin document of the tab, in tree order
// (draft: "notify documents of a tool change"). Documents of other origins
// are out of the page script's reach: Go relays to them what is exposed to
// them (exposure.js).
// While the Permissions Policy verdict is pending (policy.js), this
// document lists nothing to the others, so a toolchange sent to them then
// would announce a change they cannot see: it waits for the verdict, and an
// allowing one sends it (setPolicy).
let changedWhilePending = false;
function changed() {
  pingGo();
  if (hasNative) return;
  if (policy === 'pending') {
    changedWhilePending = true;
    return;
  }
  queueTask(() => forEachPeer((p) => { if (p.origin === ORIGIN) p.notify(); }));
}

// The windows of this tab in tree order, from the top. Frames of other
// origins are walked too (length and indexed access are allowed across
// origins); their documents are not read.
function tabWindows() {
  const out = [];
  const walk = (w) => {
    if (out.length >= MAX_WINDOWS) return;
    ArrayPush(out, w);
    let n = 0;
    try { n = w.length; } catch { return; }
    for (let i = 0; i < n && out.length < MAX_WINDOWS; i++) {
      let child = null;
      try { child = w[i]; } catch { /* gone */ }
      if (child) walk(child);
    }
  };
  let top = G;
  try { top = G.top || G; } catch { /* keep G */ }
  walk(top);
  return out;
}

// The peer of a window: the object another instance of this script left
// on its document, or null (cross-origin, insecure, or not ours).
function peerOf(w) {
  try {
    const d = w.document;
    if (d && !hasOwn(d, GUARD)) tryCall(() => d.modelContext); // lets that window's copy catch up (syncDoc)
    const desc = d && getOwnPropertyDescriptor(d, GUARD);
    const p = desc && desc.value;
    return p && typeof p === 'object' && typeof p.list === 'function' ? p : null;
  } catch {
    return null;
  }
}
function forEachPeer(fn) {
  const windows = tabWindows();
  for (let i = 0; i < windows.length; i++) {
    const w = windows[i];
    const p = peerOf(w);
    if (p) tryCall(fn, p, w);
  }
}

// ---- the operator's userscripts (cdp/userscripts.go) ----------------------

// Go runs each userscript inside a wrapper of its own, which runs the script
// through run below: the tools registered while a script runs (through
// document.modelContext or navigator.modelContext, in its own code or in
// the page's functions it calls) are its own. convertTool notes the
// script's number at the call, before the Permissions Policy may hold the
// registration back, and bridge.list hands it to Go, which names the
// script in the tools' _meta. No stack is read: a page could forge one
// (a //# sourceURL, Error.prepareStackTrace).
// A key keeps the page from running its own code as a userscript. Each
// wrapper claims the key Go gave them all as the document starts, before
// any script of the page runs (the first claim stands), and run marks
// nothing under another key. A page open before webmcp-cdp attached could
// claim first: then the userscripts' tools are not marked, and the page can
// mark its own, no more (the key is not the nonce). A registration that a
// script makes later, from a timer or an event, is not marked.
let userscriptKey = null;
let runningScript; // the number of the userscript running, or undefined
// A window's initial about:blank is replaced by a same-origin document in
// the same realm without the scripts for new documents running again
// (helpers.js, syncDoc), so a wrapper that ran in an about:blank asks to run
// again (again): the wrappers wait here, at most MAX_AGAIN, and run once as
// syncDoc starts the new document (userscriptsOnNewDocument), each claiming
// the key of that document.
const MAX_AGAIN = 64;
let againQueue = [];
function installUserscripts() {
  userscriptKey = null;
  tryCall(defineProperty, doc, Symbol.for('webmcp-cdp/userscripts'), {
    value: freeze({
      __proto__: null,
      claim(key) {
        if (userscriptKey === null && typeof key === 'string' && key.length >= 16) userscriptKey = key;
      },
      run(key, n, fn) {
        const prev = runningScript;
        const mine = userscriptKey !== null && key === userscriptKey && typeof n === 'number' && n >= 0 && n % 1 === 0;
        if (mine) runningScript = n;
        try {
          return ReflectApply(fn, G, []);
        } finally {
          runningScript = prev;
        }
      },
      again(fn) {
        if (typeof fn === 'function' && againQueue.length < MAX_AGAIN) ArrayPush(againQueue, fn);
      },
    }),
  });
}
installUserscripts();

// userscriptsOnNewDocument gives the window's new document its userscripts
// object and runs the wrappers that asked to run again (syncDoc calls it
// once the rest of the document's state is new).
function userscriptsOnNewDocument() {
  installUserscripts();
  const q = againQueue;
  againQueue = [];
  for (let i = 0; i < q.length; i++) tryCall(q[i]);
}

// ---- tool definitions (WebIDL dictionary conversion) ----------------------

// The draft's ToolAnnotations; any other annotation (MCP's title,
// destructiveHint, idempotentHint, openWorldHint, webmcp-cdp's cache, …)
// rides along to Go as a "hint" when its value is a boolean, a number or a
// short string, but getTools() drops it, as WebIDL does.
const DRAFT_HINTS = ['consequentialHint', 'debugging', 'readOnlyHint', 'untrustedContentHint'];
const MAX_HINTS = 16;

// convertTool reads a ModelContextTool the way WebIDL does: members in
// lexicographic order, each read once and converted at once. It throws the
// TypeErrors of the conversion.
function convertTool(tool, what) {
  if (tool === undefined || tool === null) tool = {};
  else if (!isObject(tool)) throw new TypeError(`${what}: the tool is not an object`);
  let annotations;
  let hints;
  const a = tool.annotations;
  if (a !== undefined) {
    if (a !== null && !isObject(a)) throw new TypeError(`${what}: annotations is not an object`);
    const src = a || {};
    annotations = {
      consequentialHint: !!src.consequentialHint,
      debugging: !!src.debugging,
      readOnlyHint: !!src.readOnlyHint,
      untrustedContentHint: !!src.untrustedContentHint,
    };
    let n = 0;
    const ks = ObjectKeys(src);
    for (let i = 0; i < ks.length; i++) {
      const k = ks[i];
      if (ArrayIncludes(DRAFT_HINTS, k) || n >= MAX_HINTS || k.length > 64) continue;
      const v = src[k];
      if (typeof v === 'boolean' || typeof v === 'number' || (typeof v === 'string' && v.length <= 256)) {
        hints = hints || {};
        hints[k] = v;
        n++;
      }
    }
  }
  const d = tool.description;
  if (d === undefined) throw new TypeError(`${what}: the tool has no description`);
  const description = toDOMString(d, what);
  const execute = tool.execute;
  if (execute === undefined) throw new TypeError(`${what}: the tool has no execute`);
  if (typeof execute !== 'function') throw new TypeError(`${what}: execute is not a function`);
  const inputSchema = tool.inputSchema;
  if (inputSchema !== undefined && !isObject(inputSchema)) {
    throw new TypeError(`${what}: inputSchema is not an object`);
  }
  const n = tool.name;
  if (n === undefined) throw new TypeError(`${what}: the tool has no name`);
  const name = toDOMString(n, what);
  // outputSchema: the JSON Schema of the tool's result (an object); Go
  // hands it to MCP clients, and the hub checks results against it.
  // Chromium 156's registerTool does not read it at all, so a value that
  // is not an object is left out rather than refused (a page that works
  // there works here).
  let outputSchema = tool.outputSchema;
  if (!isObject(outputSchema)) outputSchema = undefined;
  const t = tool.title;
  const title = t === undefined ? null : toUSVString(t, what);
  return { annotations, hints, description, execute, inputSchema, name, outputSchema, title, script: runningScript };
}

// checkTool applies the draft's registerTool checks after conversion, in
// its order: duplicate first, then the name, the description, and the
// schema's serialization (whose own error, e.g. for a cycle, is thrown).
function checkTool(t, what, isTaken) {
  if (isTaken(t.name)) throw domError('InvalidStateError', `${what}: a tool named "${t.name}" is already registered`);
  if (!test(NAME_RE, t.name)) throw domError('InvalidStateError', `${what}: the name "${t.name}" is not 1-128 characters of A-Z a-z 0-9 _ . -`);
  if (t.description === '') throw domError('InvalidStateError', `${what}: tool "${t.name}" has an empty description`);
  let schema;
  if (t.inputSchema !== undefined) {
    schema = JSONstringify(t.inputSchema);
    if (schema === undefined) throw new TypeError(`${what}: inputSchema of tool "${t.name}" does not serialize to JSON`);
  }
  // The outputSchema's JSON, for makeEntry; one that does not serialize
  // (a cycle, a BigInt) is left out, as above.
  t.outSchema = undefined;
  if (t.outputSchema !== undefined) t.outSchema = tryCall(JSONstringify, t.outputSchema);
  return schema;
}

// makeEntry makes a registry entry. outSchema is the outputSchema's JSON
// (checkTool), script the userscript that registered the tool (a tool of
// the page's own polyfill, face 'foreign', is the page's).
function makeEntry(t, schema, face, thisArg, exposed) {
  return {
    name: t.name, title: t.title, description: t.description, schema, outSchema: t.outSchema,
    annotations: t.annotations, hints: t.hints, exposed: exposed || [],
    face, execute: t.execute, thisArg, form: undefined,
    script: face === 'current' || face === 'legacy' ? t.script : undefined,
  };
}
