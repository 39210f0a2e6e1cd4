// webmcp-cdp page script.
//
// Go injects this with Page.addScriptToEvaluateOnNewDocument, so it runs in
// the main world of every document (frames and popups included) before any
// script of the page. It gives the page the WebMCP API over one registry per
// document:
//
//   - document.modelContext: the current W3C draft (webmachinelearning/webmcp
//     index.bs; the web-platform-tests under webmcp/ are the oracle):
//     registerTool(tool, {signal, exposedTo}), getTools({fromOrigins}),
//     executeTool(tool, input, {signal}), the events toolchange,
//     toolactivated and toolcancel, ToolActivatedEvent and ToolCancelEvent;
//   - declarative tools: <form toolname tooldescription [toolautosubmit]>,
//     with SubmitEvent.agentInvoked and SubmitEvent.respondWith();
//   - navigator.modelContext (also window.modelContext): the older API that
//     deployed sites call (provideContext, clearContext, registerTool,
//     unregisterTool, and execute(input, agent) with
//     agent.requestUserInteraction).
//
// Where the browser has document.modelContext natively (and the backend is
// not "polyfill"), the native API is kept: only the older face is added, on
// top of it, and Go reads native tools through the CDP WebMCP domain.
//
// The bridge to Go cannot be reached or forged by the page. The registry
// lives in this closure. The script hands one frozen bridge object to Go
// through console.debug (captured before the page runs, and marked with a
// nonce the page never sees); Go keeps a handle to it and calls its methods
// with Runtime.callFunctionOn. The runtime binding only says "something
// changed"; it carries no data, and the page cannot reach it (the global is
// deleted here).
//
// Documents of one tab that are same-origin reach each other through a
// frozen "peer" object stored on each document (see peer below). It can do
// no more than the public API already allows a same-origin script, so the
// page may see it; it never reaches the bridge, the binding or the nonce.
//
// The placeholders below are replaced by Go (polyfill.Script).
(() => {
  'use strict';
  const NONCE = '__WEBMCP_CDP_NONCE__';
  const BINDING = '__WEBMCP_CDP_BINDING__';
  const BACKEND = '__WEBMCP_CDP_BACKEND__'; // "auto" | "polyfill" | "native"

  // ---- intrinsics, captured before the page can replace them ------------
  //
  // The page runs after this script and may replace any built-in it can
  // reach: prototype methods (Array.prototype.push, Map.prototype.get,
  // Promise.prototype.then, …), Function.prototype.call/apply/bind, JSON,
  // Object.keys, and the iterators behind for…of, spread and array
  // destructuring (Array.prototype[Symbol.iterator] and
  // %ArrayIteratorPrototype%.next, the Map and Set iterators). So the code
  // that can run after the page started (registration, listing, calls,
  // events, the bridge, declarative forms) keeps to these rules:
  //   - built-in methods are captured here and called uncurried:
  //     ArrayPush(a, v) is the original push, called through a bound copy of
  //     the original Function.prototype.call (bound functions look nothing up);
  //   - internal Maps and Sets are SafeMap/SafeSet (below), whose prototypes
  //     hold the original methods and are out of the page's reach;
  //   - arrays are walked with indexed loops, Maps and Sets with their
  //     forEach, never with for…of, spread or array destructuring (object
  //     spread and destructuring are fine: they read own properties only);
  //   - objects handed to promise resolution or JSON.stringify have no
  //     prototype, so Object.prototype.then or toJSON cannot hijack them.
  // for…of remains only in code that runs before the page (installation),
  // and where WebIDL itself iterates a value the page passed (sequence
  // conversion), as a native implementation would.

  const G = globalThis;
  let doc = document; // the window's current document (see syncDoc)
  const {
    defineProperty, defineProperties, getOwnPropertyDescriptor,
    freeze, isExtensible, keys: ObjectKeys,
  } = Object;
  const ReflectApply = Reflect.apply;
  const ReflectDefineProperty = Reflect.defineProperty;
  const JSONstringify = JSON.stringify;
  const JSONparse = JSON.parse;
  const isArray = Array.isArray;
  const consoleDebug = console.debug;
  const PromiseCtor = Promise;
  const promiseThen = Promise.prototype.then;
  const PromiseResolve = Promise.resolve.bind(Promise);
  const PromiseReject = Promise.reject.bind(Promise);
  const StringCtor = String;
  const URLCtor = URL;
  const AbortControllerCtor = G.AbortController;
  const AbortSignalAny = G.AbortSignal.any;
  const AbortSignalCtor = G.AbortSignal;
  const EventTargetCtor = G.EventTarget;
  const EventCtor = G.Event;
  const DOMExceptionCtor = G.DOMException;
  const MessageChannelCtor = G.MessageChannel;
  const queueMicro = G.queueMicrotask.bind(G);
  const FnCall = Function.prototype.call;
  const FnBind = Function.prototype.bind;
  const call = ReflectApply(FnBind, FnCall, [FnCall]); // call(f, self, ...args)
  const uncurry = (f) => call(FnBind, FnCall, f); // uncurry(f)(self, ...args)
  const ObjectAssign = Object.assign;
  const NumberIsFinite = Number.isFinite;
  const SymbolIterator = Symbol.iterator;
  const AP = Array.prototype;
  const ArrayPush = uncurry(AP.push);
  const ArrayShift = uncurry(AP.shift);
  const ArrayIncludes = uncurry(AP.includes);
  const ArraySort = uncurry(AP.sort);
  const SP = String.prototype;
  const StringSlice = uncurry(SP.slice);
  const StringEndsWith = uncurry(SP.endsWith);
  const StringTrim = uncurry(SP.trim);
  const StringToLowerCase = uncurry(SP.toLowerCase);
  const RegExpExec = RegExp.prototype.exec;
  const getter = (proto, name) => getOwnPropertyDescriptor(proto, name).get;
  const setter = (proto, name) => getOwnPropertyDescriptor(proto, name).set;
  const ETproto = EventTarget.prototype;
  const dispatch = ETproto.dispatchEvent;
  const addListener = ETproto.addEventListener;
  const removeListener = ETproto.removeEventListener;
  const signalAborted = getter(AbortSignal.prototype, 'aborted');
  const signalReason = getter(AbortSignal.prototype, 'reason');
  const controllerAbort = AbortController.prototype.abort;
  const controllerSignal = getter(AbortController.prototype, 'signal');
  const eventPhase = getter(Event.prototype, 'eventPhase');
  const eventTarget = getter(Event.prototype, 'target');
  const eventDefaultPrevented = getter(Event.prototype, 'defaultPrevented');
  const nodeType = getter(Node.prototype, 'nodeType');
  const defaultView = getter(Document.prototype, 'defaultView');
  const docTitle = getter(Document.prototype, 'title');
  const titleOf = (d) => { try { return StringCtor(call(docTitle, d)); } catch { return ''; } };
  const toWellFormed = String.prototype.toWellFormed;
  const objectHasOwn = Object.prototype.hasOwnProperty;
  const hasOwn = (o, k) => call(objectHasOwn, o, k);
  const fnToString = Function.prototype.toString;
  const urlOrigin = getter(URL.prototype, 'origin');
  const urlProtocol = getter(URL.prototype, 'protocol');
  const urlHostname = getter(URL.prototype, 'hostname');

  // SafeMap, SafeSet, SafeWeakMap, SafeWeakSet: the collections with their
  // original methods on a prototype of their own, which the page never sees
  // (the same idea as Node.js's primordials). Their constructors take no
  // iterable (that would call the page-reachable add/set and iterators).
  // Iteration: forEach only; the iterators' next lives on shared, replaceable
  // prototypes.
  const makeSafe = (Base, Safe) => {
    const from = Base.prototype;
    const keys = Reflect.ownKeys(from);
    for (let i = 0; i < keys.length; i++) { // (before the page: no iteration hazard either way)
      const k = keys[i];
      if (k !== 'constructor') defineProperty(Safe.prototype, k, getOwnPropertyDescriptor(from, k));
    }
    freeze(Safe.prototype);
    return freeze(Safe);
  };
  const SafeMap = makeSafe(Map, class SafeMap extends Map { constructor() { super(); } });
  const SafeSet = makeSafe(Set, class SafeSet extends Set { constructor() { super(); } });
  const SafeWeakMap = makeSafe(WeakMap, class SafeWeakMap extends WeakMap { constructor() { super(); } });
  const SafeWeakSet = makeSafe(WeakSet, class SafeWeakSet extends WeakSet { constructor() { super(); } });
  // The keys of a SafeMap, as an array.
  const keysOf = (m) => { const out = []; m.forEach((v, k) => { ArrayPush(out, k); }); return out; };

  // f(...args) without spreading args (spread calls the array iterator).
  const tryCall = (f, ...args) => { try { return ReflectApply(f, undefined, args); } catch { return undefined; } };
  // then is the original Promise.prototype.then. (It still reads the
  // promise's constructor for its species, as every then does.)
  const then = (p, ok, err) => call(promiseThen, p, ok, err);
  // test is RegExp.prototype.test without its lookup of "exec" on the
  // regexp: the original exec reads only the regexp's own lastIndex.
  const test = (re, s) => call(RegExpExec, re, s) !== null;
  // resolveWith settles a promise (through res and rej) with v. A native
  // promise is followed with the original then: res(v) would look up
  // v.then, which the page may have replaced. Any other value goes to res
  // (a thenable of the page's own is followed as the page wrote it).
  function resolveWith(v, res, rej) {
    if (isObject(v)) {
      try {
        call(promiseThen, v, res, rej); // throws at once for a non-promise
        return;
      } catch { /* not a native promise */ }
    }
    res(v);
  }

  // The binding: take it and hide it, so only this script can ping Go. (Its
  // name is random per browser session, so the page cannot plant one; if it
  // is not there yet, pingGo looks again.)
  let ping = null;
  function takeBinding() {
    if (typeof G[BINDING] === 'function') {
      ping = G[BINDING];
      try { delete G[BINDING]; } catch { /* non-configurable: leave it */ }
    }
  }
  takeBinding();

  // One installation per document. The window of a popup is reused by its
  // first navigation, so a guard on the global would skip the new document.
  // The guard also carries this document's peer (defined further down).
  const GUARD = '__webmcpCdpInstalled';
  if (hasOwn(doc, GUARD)) return;

  // WebMCP is a [SecureContext] API: nothing at all in other documents.
  if (!G.isSecureContext) {
    defineProperty(doc, GUARD, { value: null });
    return;
  }

  // Native WebMCP: a getter of native code (not an earlier copy of ours).
  const nativeDescriptor = getOwnPropertyDescriptor(G.Document.prototype, 'modelContext');
  const hasNative = !!nativeDescriptor && typeof nativeDescriptor.get === 'function' &&
    test(/\{\s*\[native code\]\s*\}\s*$/, call(fnToString, nativeDescriptor.get)) && BACKEND !== 'polyfill';
  const ORIGIN = G.origin; // the serialized origin, inherited by about:blank

  const NAME_RE = /^[A-Za-z0-9_.-]{1,128}$/;
  const MAX_WINDOWS = 256; // frames walked per tree operation
  const MAX_FORMS = 64; // declarative forms per document
  const MAX_CONTROLS = 256; // controls read per form

  // ---- small helpers ------------------------------------------------------

  function domError(name, message) {
    return new DOMExceptionCtor(message, name);
  }

  // WebIDL DOMString / USVString conversions.
  function toDOMString(v, what) {
    if (typeof v === 'symbol') throw new TypeError(`${what}: a Symbol cannot be converted to a string`);
    return StringCtor(v);
  }
  function toUSVString(v, what) {
    return call(toWellFormed, toDOMString(v, what));
  }
  function isObject(v) {
    return v !== null && (typeof v === 'object' || typeof v === 'function');
  }

  // WebIDL AbortSignal conversion: the brand check of the aborted getter
  // accepts AbortSignals of every realm and nothing else.
  function toSignal(v, what) {
    if (v === undefined) return undefined;
    try {
      call(signalAborted, v);
    } catch {
      throw new TypeError(`${what}: signal is not an AbortSignal`);
    }
    return v;
  }
  const isAborted = (signal) => call(signalAborted, signal);
  const reasonOf = (signal) => call(signalReason, signal);
  function onAbort(signal, fn) {
    call(addListener, signal, 'abort', fn, { once: true });
  }
  function abortController(ctrl, reason) {
    call(controllerAbort, ctrl, reason);
  }

  // WebIDL sequence<USVString> conversion.
  function toStringList(v, what) {
    if (v === undefined) return undefined;
    if (!isObject(v) || typeof v[SymbolIterator] !== 'function') {
      throw new TypeError(`${what}: the value is not a sequence`);
    }
    const out = [];
    // The page's value is iterated with its own iterator, as WebIDL says (a
    // native implementation calls a replaced one too); only out is ours.
    for (const s of v) ArrayPush(out, toUSVString(s, what)); // (WebIDL)
    return out;
  }

  // Returns the serialized origin of url when it is potentially trustworthy
  // (Secure Contexts §3.1), or null when url does not parse or is not.
  function trustworthyOrigin(url) {
    let u;
    try { u = new URLCtor(url); } catch { return null; }
    const origin = call(urlOrigin, u);
    if (origin === 'null') return null;
    const protocol = call(urlProtocol, u);
    if (protocol === 'https:' || protocol === 'wss:') return origin;
    const h = call(urlHostname, u);
    if (h === 'localhost' || StringEndsWith(h, '.localhost') || h === '[::1]' ||
        test(/^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/, h)) return origin;
    return null;
  }

  function errorText(err) {
    try {
      if (err && typeof err === 'object' && 'message' in err) {
        const n = err.name && err.name !== 'Error' ? StringCtor(err.name) + ': ' : '';
        return n + StringCtor(err.message);
      }
      return StringCtor(err);
    } catch {
      return 'the tool threw a value that cannot be shown';
    }
  }

  // Tasks. The draft runs registration, notification and cancellation steps
  // "in parallel" and comes back with queued tasks; a private MessageChannel
  // gives this document a FIFO task queue of its own.
  const tasks = [];
  const channel = new MessageChannelCtor();
  const postTask = MessagePort.prototype.postMessage;
  channel.port1.onmessage = () => {
    const fn = ArrayShift(tasks);
    if (fn) fn();
  };
  function queueTask(fn) {
    ArrayPush(tasks, fn);
    call(postTask, channel.port2, null);
  }

  // A window, and its JavaScript realm, can outlive its first document: the
  // initial about:blank of a frame or a popup is replaced by a same-origin
  // document in the same realm, and Chromium does not run this script again
  // for it (measured on Chromium 156; Go keeps the same execution context and
  // bridge). So the per-document state follows the window's current
  // document: syncDoc notices a new document and starts it afresh (no tools,
  // a new ModelContext). It runs whenever the API or the bridge is used, and
  // on the new document's readystatechange.
  const onNewDocument = [];
  function syncDoc() {
    let d;
    try { d = G.document; } catch { return; }
    if (!d || d === doc || hasOwn(d, GUARD)) return;
    const old = doc;
    doc = d;
    defineProperty(doc, GUARD, { value: hasNative ? null : peer });
    for (let i = 0; i < onNewDocument.length; i++) tryCall(onNewDocument[i], old);
    pingGo();
  }

  // ---- the registry -------------------------------------------------------

  // name -> entry. An entry is
  //   {name, title (string|null), description, schema (JSON string or
  //    undefined), annotations (the four draft booleans, or undefined),
  //    hints (MCP annotations for Go, or undefined), exposed (origins),
  //    face: "current" | "legacy" | "form",
  //    execute (function) and thisArg, or form (the declarative state)}.
  // With native WebMCP it holds only what Go would run through the bridge
  // (nothing of the native API itself).
  const registry = new SafeMap();

  // Changes are announced to Go once per microtask: a page that registers
  // 100 tools in a loop costs one ping and one read from Go.
  let pingQueued = false;
  function pingGo() {
    if (!ping) takeBinding();
    if (pingQueued || !ping) return;
    pingQueued = true;
    queueMicro(() => {
      pingQueued = false;
      try { ping('changed'); } catch { /* context going away */ }
    });
  }

  // changed announces a change of this document's tools: to Go, and with a
  // toolchange event at every same-origin document of the tab, in tree order
  // (draft: "notify documents of a tool change"). Cross-origin documents are
  // out of the polyfill's reach, so exposedTo only matters natively.
  function changed() {
    pingGo();
    if (hasNative) return;
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
    const t = tool.title;
    const title = t === undefined ? null : toUSVString(t, what);
    return { annotations, hints, description, execute, inputSchema, name, title };
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
    return schema;
  }

  function makeEntry(t, schema, face, thisArg, exposed) {
    return {
      name: t.name, title: t.title, description: t.description, schema,
      annotations: t.annotations, hints: t.hints, exposed: exposed || [],
      face, execute: t.execute, thisArg, form: undefined,
    };
  }

  // ---- execution ------------------------------------------------------------

  // Local executions of this document: id -> {ctrl, name, done, form}.
  const running = new SafeMap();
  const NAVIGATED = freeze({}); // a form submission that navigates

  // serialize turns a tool's value into a completion: strings verbatim,
  // other values as JSON. (The draft serializes every value; Chromium and the
  // tests hand strings back verbatim, and undefined as "undefined".)
  function serialize(value) {
    if (value === NAVIGATED) return { ok: true, kind: 'navigated' };
    if (typeof value === 'string') return { ok: true, kind: 'string', value };
    if (value === undefined) return { ok: true, kind: 'undefined' };
    let json;
    try {
      json = JSONstringify(value);
    } catch (e) {
      return { ok: false, error: `the result cannot be serialized to JSON: ${errorText(e)}` };
    }
    if (json === undefined) return { ok: true, kind: 'undefined' };
    return { ok: true, kind: 'json', value: json };
  }

  // The options object a tool's execute receives: the draft's {signal}, plus
  // the older API's requestUserInteraction.
  function executeOptions(signal) {
    return {
      signal,
      requestUserInteraction(cb) {
        if (typeof cb !== 'function') return PromiseReject(new TypeError('requestUserInteraction: the callback is not a function'));
        // cb runs in a later microtask; its promise is followed with the
        // original then (see resolveWith).
        return new PromiseCtor((res, rej) => queueMicro(() => {
          let v;
          try { v = cb(); } catch (e) { rej(e); return; }
          resolveWith(v, res, rej);
        }));
      },
    };
  }

  // runLocal runs a tool of this document: the draft's "tool execute steps"
  // and "imperative execute steps". done receives one completion:
  // {ok:true, kind, value} or {ok:false, error}. Everything arrives as
  // strings, so the caller may be another realm (a frame) or Go.
  function runLocal(name, inputJSON, id, done) {
    const entry = registry.get(name);
    if (!entry) return done({ ok: false, error: `no tool named "${name}" is registered in this document` });
    let input;
    try {
      input = JSONparse(inputJSON);
    } catch (e) {
      return done({ ok: false, error: `the input is not JSON: ${errorText(e)}` });
    }
    if (!isObject(input)) return done({ ok: false, error: 'the input must be a JSON object' });
    const ctrl = new AbortControllerCtor();
    const run = { ctrl, name, done, form: undefined };
    let promise;
    if (entry.form) {
      // A form is filled before toolactivated fires (so listeners see the
      // agent's values), then submitted. One call at a time per form.
      if (entry.form.exec) return done({ ok: false, error: 'the form is already being filled by another call' });
      try {
        fillForm(entry.form, input);
      } catch (e) {
        return done({ ok: false, error: errorText(e) });
      }
      running.set(id, run);
      fireToolEvent('toolactivated', name);
      promise = submitForm(entry, run, id);
    } else {
      fireToolEvent('toolactivated', name);
      running.set(id, run);
      try {
        promise = PromiseResolve(call(entry.execute, entry.thisArg, input, executeOptions(call(controllerSignal, ctrl))));
      } catch (e) {
        promise = PromiseReject(e);
      }
    }
    then(promise, (value) => {
      if (running.get(id) !== run) return; // cancelled
      running.delete(id);
      done(serialize(value));
    }, (err) => {
      if (running.get(id) !== run) return;
      running.delete(id);
      done({ ok: false, error: errorText(err) });
    });
    return undefined;
  }

  // cancelLocal is the draft's "cancel a pending tool execution" on this
  // side: abort the tool's own signal with an AbortError, fire toolcancel,
  // and complete the call with error (callers that settled already ignore it).
  function cancelLocal(id, message, error) {
    const run = running.get(id);
    if (!run) return;
    running.delete(id);
    if (run.form) run.form.finish();
    abortController(run.ctrl, domError('AbortError', message || 'The tool call was cancelled.'));
    fireToolEvent('toolcancel', run.name);
    run.done({ ok: false, error: error || `the call was cancelled${message ? ': ' + message : ''}` });
  }

  // ---- the peer: what other same-origin documents of the tab may use ------

  const peer = freeze({
    origin: ORIGIN,
    // notify fires toolchange here.
    notify() {
      if (current) call(dispatch, current, new EventCtor('toolchange'));
    },
    // list returns this document's tools as plain data.
    list(callerOrigin) {
      const out = [];
      if (!active()) return out;
      registry.forEach((e) => {
        if (callerOrigin !== ORIGIN && !ArrayIncludes(e.exposed, callerOrigin)) return;
        ArrayPush(out, { name: e.name, title: e.title, description: e.description, schema: e.schema, annotations: e.annotations ? { ...e.annotations } : undefined });
      });
      return out;
    },
    // run and cancel execute a tool of this document for a caller.
    run(name, inputJSON, id, done) {
      runLocal(StringCtor(name), StringCtor(inputJSON), 'peer:' + StringCtor(id), (r) => tryCall(done, r));
    },
    cancel(id) {
      cancelLocal('peer:' + StringCtor(id));
    },
  });
  defineProperty(doc, GUARD, { value: hasNative ? null : peer });
  ArrayPush(onNewDocument, () => {
    const ids = keysOf(running);
    for (let i = 0; i < ids.length; i++) cancelLocal(ids[i], 'the document was replaced');
    registry.clear();
  });
  call(addListener, G, 'readystatechange', syncDoc, true);

  function active() {
    return call(defaultView, doc) !== null;
  }

  // ---- the current W3C face: document.modelContext --------------------------

  let current = null; // this document's ModelContext (polyfill only)
  let fireToolEvent = () => {};

  function installCurrent() {
    // ToolActivatedEvent and ToolCancelEvent (draft §Events).
    const makeToolEvent = (className) => {
      const C = class extends EventCtor {
        #toolName;
        constructor(type, eventInitDict = undefined) {
          if (arguments.length < 1) throw new TypeError(`Failed to construct '${className}': 1 argument required, but only 0 present.`);
          const t = toDOMString(type, className);
          if (eventInitDict !== undefined && eventInitDict !== null && !isObject(eventInitDict)) {
            throw new TypeError(`Failed to construct '${className}': the init dictionary is not an object`);
          }
          const init = eventInitDict || {};
          super(t, init);
          this.#toolName = init.toolName === undefined ? '' : toDOMString(init.toolName, className);
        }
        get toolName() {
          if (!(#toolName in this)) throw new TypeError('Illegal invocation');
          return this.#toolName;
        }
      };
      defineProperty(C, 'name', { value: className });
      defineProperty(C.prototype, Symbol.toStringTag, { value: className, configurable: true });
      defineProperty(C.prototype, 'toolName', { enumerable: true });
      return C;
    };
    const ToolActivatedEvent = makeToolEvent('ToolActivatedEvent');
    const ToolCancelEvent = makeToolEvent('ToolCancelEvent');

    // The draft fires toolactivated and toolcancel at the tool's
    // ModelContext; the declarative explainer (and the web-platform-tests)
    // also deliver them at its Window. They never bubble, so the Window gets
    // an event of its own, right after the ModelContext's.
    fireToolEvent = (type, name) => {
      const C = type === 'toolactivated' ? ToolActivatedEvent : ToolCancelEvent;
      if (current) tryCall(() => call(dispatch, current, new C(type, { toolName: name })));
      tryCall(() => call(dispatch, G, new C(type, { toolName: name })));
    };

    let constructing = false;
    let deactivate;
    const instances = new SafeWeakSet();
    class ModelContext extends EventTargetCtor {
      #active;
      static { deactivate = (mc) => { mc.#active = false; }; }

      constructor() {
        if (!constructing) throw new TypeError('Illegal constructor');
        super();
        this.#active = constructing === 'active';
        instances.add(this);
      }

      // registerTool(tool, options): the draft's steps, in order. It never
      // throws; every error rejects the returned promise.
      registerTool(tool, options = undefined) {
        try {
          if (!(#active in this)) throw new TypeError('Illegal invocation');
          const t = convertTool(tool, 'registerTool');
          const o = convertOptions(options, 'registerTool', ['exposedTo', 'signal']);
          if (!this.#active || !active()) throw domError('InvalidStateError', 'registerTool: the document is not active');
          const schema = checkTool(t, 'registerTool', (n) => registry.has(n));
          if (o.signal && isAborted(o.signal)) return PromiseReject(reasonOf(o.signal));
          const exposed = [];
          const exposedTo = o.exposedTo || [];
          for (let i = 0; i < exposedTo.length; i++) {
            const s = exposedTo[i];
            const origin = trustworthyOrigin(s);
            if (origin === null) throw domError('SecurityError', `registerTool: "${s}" is not a potentially trustworthy origin`);
            ArrayPush(exposed, origin);
          }
          const entry = makeEntry(t, schema, 'current', undefined, exposed);
          let resolve;
          let reject;
          const promise = new PromiseCtor((res, rej) => { resolve = res; reject = rej; });
          if (o.signal) {
            const signal = o.signal;
            onAbort(signal, () => {
              // Unregister, then reject (a no-op once resolved).
              if (registry.get(entry.name) === entry) {
                registry.delete(entry.name);
                changed();
                formsMayRegister();
              }
              reject(reasonOf(signal));
            });
          }
          registry.set(entry.name, entry);
          changed(); // queues the toolchange task first,
          queueTask(() => resolve(undefined)); // so the promise resolves after it
          return promise;
        } catch (err) {
          return PromiseReject(err);
        }
      }

      // getTools(options): the tools of every same-origin document of the
      // tab, sorted by name (code units).
      getTools(options = undefined) {
        try {
          if (!(#active in this)) throw new TypeError('Illegal invocation');
          const o = convertOptions(options, 'getTools', ['fromOrigins']);
          if (!this.#active || !active()) throw domError('InvalidStateError', 'getTools: the document is not active');
          const fromOrigins = o.fromOrigins || [];
          for (let i = 0; i < fromOrigins.length; i++) {
            const s = fromOrigins[i];
            if (trustworthyOrigin(s) === null) throw domError('SecurityError', `getTools: "${s}" is not a potentially trustworthy origin`);
          }
          return new PromiseCtor((resolve) => queueTask(() => {
            const tools = [];
            forEachPeer((p, w) => {
              if (tools.length >= 10000) return;
              const list = p.list(ORIGIN); // (an array of p's realm)
              for (let i = 0; i < list.length; i++) ArrayPush(tools, registeredTool(list[i], w, p.origin));
            });
            ArraySort(tools, (a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
            resolve(tools);
          }));
        } catch (err) {
          return PromiseReject(err);
        }
      }

      // executeTool(tool, inputObject, options). The tool may live in any
      // same-origin document of the tab (tool.window).
      executeTool(tool, inputObject = undefined, options = undefined) {
        try {
          if (!(#active in this)) throw new TypeError('Illegal invocation');
          const t = convertRegisteredTool(tool);
          let input = inputObject;
          if (input === undefined) input = {};
          else if (!isObject(input)) throw new TypeError('executeTool: the input is not an object');
          const o = convertOptions(options, 'executeTool', ['signal']);
          if (!this.#active || !active()) throw domError('InvalidStateError', 'executeTool: the document is not active');
          let expected;
          try { expected = call(urlOrigin, new URLCtor(t.origin)); } catch { expected = 'null'; }
          if (expected === 'null') throw domError('NotSupportedError', 'executeTool: tool.origin is not the origin of a document that can hold tools');
          const inputJSON = JSONstringify(input);
          if (inputJSON === undefined) throw new TypeError('executeTool: the input does not serialize to JSON');
          const signal = o.signal;
          // An aborted signal rejects at once; the tool never runs.
          if (signal && isAborted(signal)) return PromiseReject(reasonOf(signal));
          return execute(t, expected, inputJSON, signal);
        } catch (err) {
          return PromiseReject(err);
        }
      }
    }
    defineProperty(ModelContext.prototype, Symbol.toStringTag, { value: 'ModelContext', configurable: true });
    for (const m of ['registerTool', 'getTools', 'executeTool']) { // (before the page)
      defineProperty(ModelContext.prototype, m, { enumerable: true });
    }

    // The event handler attributes (HTML "event handler IDL attributes"):
    // the listener is added when a handler is first set, and calls whatever
    // handler is current.
    const handlerState = new SafeWeakMap();
    for (const type of ['toolchange', 'toolactivated', 'toolcancel']) { // (before the page)
      defineProperty(ModelContext.prototype, 'on' + type, {
        enumerable: true,
        configurable: true,
        get: { [`on${type}`]() { return stateOf(this).handlers[type]; } }[`on${type}`],
        set: { [`on${type}`](v) {
          const st = stateOf(this);
          const fn = typeof v === 'function' ? v : null;
          st.handlers[type] = fn;
          if (fn && !st.listeners[type]) {
            const self = this;
            st.listeners[type] = function (ev) {
              const h = st.handlers[type];
              if (h) return call(h, self, ev);
              return undefined;
            };
            call(addListener, this, type, st.listeners[type]);
          } else if (!fn && st.listeners[type]) {
            call(removeListener, this, type, st.listeners[type]);
            st.listeners[type] = null;
          }
        } }[`on${type}`],
      });
    }
    function stateOf(mc) {
      if (!instances.has(mc)) throw new TypeError('Illegal invocation');
      let st = handlerState.get(mc);
      if (!st) {
        st = { handlers: { toolchange: null, toolactivated: null, toolcancel: null }, listeners: { toolchange: null, toolactivated: null, toolcancel: null } };
        handlerState.set(mc, st);
      }
      return st;
    }

    function convertOptions(options, what, members) {
      if (options === undefined || options === null) return {};
      if (!isObject(options)) throw new TypeError(`${what}: the options are not an object`);
      const out = {};
      for (let i = 0; i < members.length; i++) { // lexicographic, like WebIDL
        const m = members[i];
        if (m === 'signal') out.signal = toSignal(options.signal, what);
        else out[m] = toStringList(options[m], what);
      }
      return out;
    }

    // A RegisteredTool dictionary in this realm.
    function registeredTool(d, w, origin) {
      const t = {};
      if (d.annotations) {
        const a = d.annotations;
        t.annotations = { consequentialHint: a.consequentialHint, debugging: a.debugging, readOnlyHint: a.readOnlyHint, untrustedContentHint: a.untrustedContentHint };
      }
      t.description = StringCtor(d.description);
      if (d.schema !== undefined) t.inputSchema = JSONparse(d.schema); // a fresh object every time
      t.name = StringCtor(d.name);
      t.origin = origin;
      t.title = d.title === null || d.title === undefined ? '' : StringCtor(d.title);
      t.window = w;
      return t;
    }

    // WebIDL conversion of a RegisteredTool (required: description, name,
    // origin, window).
    function convertRegisteredTool(tool) {
      if (tool === undefined || tool === null) tool = {};
      else if (!isObject(tool)) throw new TypeError('executeTool: the tool is not an object');
      const a = tool.annotations;
      if (a !== undefined && a !== null && !isObject(a)) throw new TypeError('executeTool: annotations is not an object');
      const d = tool.description;
      if (d === undefined) throw new TypeError("executeTool: the tool's required member description is undefined");
      toDOMString(d, 'executeTool');
      const s = tool.inputSchema;
      if (s !== undefined && !isObject(s)) throw new TypeError('executeTool: inputSchema is not an object');
      const n = tool.name;
      if (n === undefined) throw new TypeError("executeTool: the tool's required member name is undefined");
      const name = toDOMString(n, 'executeTool');
      const o = tool.origin;
      if (o === undefined) throw new TypeError("executeTool: the tool's required member origin is undefined");
      const origin = toUSVString(o, 'executeTool');
      const ti = tool.title;
      if (ti !== undefined) toUSVString(ti, 'executeTool');
      const w = tool.window;
      if (w === undefined) throw new TypeError("executeTool: the tool's required member window is undefined");
      if (!isWindow(w)) throw new TypeError('executeTool: tool.window is not a Window');
      return { name, origin, window: w };
    }
    function isWindow(w) {
      if (!isObject(w)) return false;
      try { return w.window === w && w.self === w; } catch { return false; }
    }

    // Call ids: unique across the documents of the tab that may call one
    // target (each caller has its own counter).
    const caller = G.crypto.randomUUID();
    let seq = 0;
    // execute runs the caller's half of executeTool: one promise, settled by
    // the target's completion or by the caller's abort, whichever is first.
    function execute(t, expected, inputJSON, signal) {
      const id = `${caller}.${++seq}`;
      let settled = false;
      let target = null;
      return new PromiseCtor((resolve, reject) => {
        if (signal) {
          onAbort(signal, () => {
            if (settled) return;
            settled = true;
            reject(reasonOf(signal));
            // The target learns of it in a later task (draft: in parallel).
            queueTask(() => { if (target) tryCall(() => target.cancel(id)); });
          });
        }
        const fail = (message) => {
          if (settled) return;
          settled = true;
          reject(domError('UnknownError', message));
        };
        queueTask(() => {
          // Even when the caller aborted meanwhile, the tool starts, and the
          // cancellation queued after this task reaches it.
          let inTab = false;
          const windows = tabWindows();
          for (let i = 0; i < windows.length; i++) if (windows[i] === t.window) inTab = true;
          if (!inTab) return fail('executeTool: the tool does not live in this tab');
          const p = peerOf(t.window);
          if (!p) return fail('executeTool: the tool lives in a document this polyfill cannot reach (another origin)');
          if (p.origin !== expected) return fail("executeTool: the tool's document is not of tool.origin");
          target = p;
          p.run(t.name, inputJSON, id, (r) => {
            if (settled) return;
            if (!r.ok) return fail(StringCtor(r.error));
            settled = true;
            if (r.kind === 'navigated') resolve(null);
            else if (r.kind === 'undefined') resolve('undefined');
            else resolve(StringCtor(r.value));
          });
          return undefined;
        });
      });
    }

    // Install document.modelContext ([SecureContext, SameObject], an
    // accessor on Document.prototype) and the interfaces.
    const make = (kind) => {
      constructing = kind;
      try { return new ModelContext(); } finally { constructing = false; }
    };
    current = make('active');
    const others = new SafeWeakMap(); // documents without a browsing context
    ArrayPush(onNewDocument, (old) => {
      others.set(old, current); // the old document's keeps answering, inactive
      deactivate(current);
      current = make('active');
    });
    const get = {
      get modelContext() {
        if (call(nodeType, this) !== 9) throw new TypeError('Illegal invocation');
        if (this !== doc) syncDoc();
        if (this === doc) return current;
        let mc = others.get(this);
        if (!mc) {
          mc = make('inactive'); // every call rejects: not fully active
          others.set(this, mc);
        }
        return mc;
      },
    };
    defineProperty(G.Document.prototype, 'modelContext', {
      configurable: true,
      enumerable: true,
      get: getOwnPropertyDescriptor(get, 'modelContext').get,
    });
    for (const [k, v] of [['ModelContext', ModelContext], ['ToolActivatedEvent', ToolActivatedEvent], ['ToolCancelEvent', ToolCancelEvent]]) { // (before the page)
      defineProperty(G, k, { value: v, configurable: true, writable: true, enumerable: false });
    }

    installForms();
  }

  // ---- declarative tools: <form toolname tooldescription> ------------------

  // Polyfill only (native Chromium handles its own forms). Each
  // <form toolname="…" tooldescription="…" [toolautosubmit]> becomes a tool
  // whose schema is synthesized from its controls, as Chromium 156 does:
  // text-like inputs and textarea → string (pattern, minLength, maxLength),
  // number and range → number (minimum, maximum, multipleOf from step),
  // checkbox → boolean, radio group and select → string with enum (and
  // anyOf of const/title), select multiple → array of those, date and time
  // types → string with a format or pattern; hidden, file, button-like,
  // disabled and unnamed controls are left out, and so are names used by
  // more than one control (other than a radio group). toolparamdescription,
  // or else the control's label, gives a property's description; required
  // fills "required". A MutationObserver keeps the tools in step with the
  // DOM (coalesced per microtask, bounded per form).
  let formsMayRegister = () => {};
  let fillForm = () => { throw new Error('declarative tools are not available'); };
  let submitForm = () => PromiseReject(new Error('declarative tools are not available'));

  if (!hasNative) installCurrent(); // (after the declarations it assigns)

  function installForms() {
    const H = G.HTMLFormElement.prototype;
    const qsa = Document.prototype.querySelectorAll;
    const elQuerySelector = Element.prototype.querySelector;
    const matches = Element.prototype.matches;
    const getAttr = Element.prototype.getAttribute;
    const hasAttr = Element.prototype.hasAttribute;
    const formElements = getter(H, 'elements');
    const formNoValidate = getter(H, 'noValidate');
    const requestSubmit = H.requestSubmit;
    const nativeSubmit = H.submit;
    const isConnected = getter(Node.prototype, 'isConnected');
    const localName = getter(Element.prototype, 'localName');
    const textContent = getter(Node.prototype, 'textContent');
    const focus = G.HTMLElement.prototype.focus;
    const I = G.HTMLInputElement.prototype;
    const S = G.HTMLSelectElement.prototype;
    const T = G.HTMLTextAreaElement.prototype;
    const Op = G.HTMLOptionElement.prototype;
    const set = {
      inputValue: setter(I, 'value'), checked: setter(I, 'checked'),
      textareaValue: setter(T, 'value'), selected: setter(Op, 'selected'),
    };
    const get = {
      inputValue: getter(I, 'value'), checked: getter(I, 'checked'), type: getter(I, 'type'),
      textareaValue: getter(T, 'value'), selectOptions: getter(S, 'options'), multiple: getter(S, 'multiple'),
      optionValue: getter(Op, 'value'), optionText: getter(Op, 'text'), selected: getter(Op, 'selected'),
      disabled: (el) => { try { return call(matches, el, ':disabled'); } catch { return true; } },
      labels: (el) => { try { return el.labels; } catch { return null; } },
      validity: (el) => { try { return el.willValidate && !el.validity.valid; } catch { return false; } },
    };

    // form element -> its state {entry, name, description, schema,
    // autosubmit, params: Map(name -> param), exec}.
    const forms = new SafeMap();
    let conflicts = false; // a form waits for a name taken imperatively

    // clean collapses white space to one space and trims, with the original
    // exec and trim (String.prototype.replace would look up the page's
    // Symbol.replace, exec, flags…).
    const SPACES = /\s+/g;
    const clean = (v) => {
      const s = StringCtor(v);
      let out = '';
      let last = 0;
      let m;
      SPACES.lastIndex = 0;
      while ((m = call(RegExpExec, SPACES, s)) !== null) {
        out += StringSlice(s, last, m.index) + ' ';
        last = m.index + m[0].length;
      }
      return StringTrim(out + StringSlice(s, last));
    };
    const num = (s) => (s !== null && StringTrim(s) !== '' && NumberIsFinite(+s) ? +s : undefined);

    function describe(el) {
      const d = call(getAttr, el, 'toolparamdescription');
      if (d !== null) return clean(d);
      const labels = get.labels(el);
      if (labels && labels.length) {
        const text = clean(call(textContent, labels[0]));
        if (text) return text;
      }
      return undefined;
    }

    // synthesize builds the input schema of a form and the map of its
    // parameters (what fillForm needs to set each one).
    function synthesize(form) {
      const properties = {};
      const required = [];
      const params = new SafeMap();
      const counts = new SafeMap();
      const controls = [];
      const all = call(formElements, form);
      for (let i = 0; i < all.length && i < MAX_CONTROLS; i++) ArrayPush(controls, all[i]);
      const named = [];
      for (let i = 0; i < controls.length; i++) {
        const el = controls[i];
        const tag = call(localName, el);
        if (tag !== 'input' && tag !== 'select' && tag !== 'textarea') continue;
        const name = el.name;
        if (!name || get.disabled(el)) continue;
        const type = tag === 'input' ? call(get.type, el) : tag;
        if (type === 'hidden' || type === 'file' || type === 'submit' || type === 'reset' || type === 'button' || type === 'image') continue;
        ArrayPush(named, { el, name, type, tag });
        const kind = type === 'radio' ? 'radio' : 'other';
        const c = counts.get(name) || { radio: 0, other: 0 };
        c[kind]++;
        counts.set(name, c);
      }
      for (let i = 0; i < named.length; i++) {
        const { el, name, type, tag } = named[i];
        const c = counts.get(name);
        if (c.other > 1 || (c.other && c.radio)) continue; // ambiguous
        if (type === 'radio') {
          let p = params.get(name);
          if (!p) {
            p = { kind: 'radio', radios: [] };
            params.set(name, p);
            properties[name] = { type: 'string', anyOf: [], enum: [] };
          }
          const v = call(get.inputValue, el);
          ArrayPush(p.radios, el);
          if (!ArrayIncludes(properties[name].enum, v)) {
            ArrayPush(properties[name].anyOf, { type: 'string', const: v });
            ArrayPush(properties[name].enum, v);
          }
          const desc = describe(el);
          if (desc && properties[name].description === undefined && call(getAttr, el, 'toolparamdescription') !== null) properties[name].description = desc;
          if (el.required && !ArrayIncludes(required, name)) ArrayPush(required, name);
          continue;
        }
        let prop;
        let p;
        if (tag === 'select') {
          const opts = call(get.selectOptions, el);
          const anyOf = [];
          const values = [];
          for (let i = 0; i < opts.length && i < MAX_CONTROLS; i++) {
            const v = call(get.optionValue, opts[i]);
            if (ArrayIncludes(values, v)) continue;
            ArrayPush(values, v);
            ArrayPush(anyOf, { type: 'string', const: v, title: clean(call(get.optionText, opts[i])) });
          }
          const item = { type: 'string', anyOf, enum: values };
          if (call(get.multiple, el)) {
            prop = { type: 'array', items: item, uniqueItems: true };
            p = { kind: 'select-multiple', el };
          } else {
            prop = item;
            p = { kind: 'select', el };
          }
        } else if (type === 'checkbox') {
          prop = { type: 'boolean' };
          p = { kind: 'checkbox', el };
        } else if (type === 'number' || type === 'range') {
          prop = { type: 'number' };
          const min = num(call(getAttr, el, 'min'));
          const max = num(call(getAttr, el, 'max'));
          const stepAttr = call(getAttr, el, 'step');
          if (min !== undefined) prop.minimum = min;
          else if (type === 'range') prop.minimum = 0;
          if (max !== undefined) prop.maximum = max;
          else if (type === 'range') prop.maximum = 100;
          if (stepAttr === null || StringToLowerCase(StringTrim(stepAttr)) !== 'any') {
            const step = num(stepAttr);
            prop.multipleOf = step !== undefined && step > 0 ? step : 1;
          }
          p = { kind: 'value', el };
        } else {
          prop = { type: 'string' };
          const formats = {
            date: { format: 'date' },
            'datetime-local': { pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]+)?)?$' },
            time: { pattern: '^[0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]+)?)?$' },
            month: { pattern: '^[0-9]{4}-[0-9]{2}$' },
            week: { pattern: '^[0-9]{4}-W[0-9]{2}$' },
            color: { pattern: '^#[0-9a-fA-F]{6}$' },
            email: { format: 'email' },
            url: { format: 'uri' },
          };
          const f = formats[type];
          if (f) ObjectAssign(prop, f);
          if (tag === 'input' && !f) {
            const pattern = call(getAttr, el, 'pattern');
            if (pattern) prop.pattern = pattern;
          }
          const minLength = num(call(getAttr, el, 'minlength'));
          const maxLength = num(call(getAttr, el, 'maxlength'));
          if (minLength !== undefined && minLength >= 0) prop.minLength = minLength;
          if (maxLength !== undefined && maxLength >= 0) prop.maxLength = maxLength;
          p = { kind: tag === 'textarea' ? 'textarea' : 'value', el };
        }
        const desc = describe(el);
        if (desc) prop.description = desc;
        properties[name] = prop;
        params.set(name, p);
        if (el.required && !ArrayIncludes(required, name)) ArrayPush(required, name);
      }
      params.forEach((p, name) => {
        if (p.kind === 'radio' && properties[name].anyOf.length === 0) delete properties[name];
      });
      return { schema: { type: 'object', properties, required }, params };
    }

    function read(form) {
      const name = call(getAttr, form, 'toolname');
      const description = call(getAttr, form, 'tooldescription');
      if (name === null || !test(NAME_RE, name) || !description) return null;
      const { schema, params } = synthesize(form);
      return { name, description, schema: JSONstringify(schema), params, autosubmit: call(hasAttr, form, 'toolautosubmit') };
    }

    // sync brings the registry in step with the forms of the document.
    function sync() {
      let dirty = false;
      const seen = new SafeSet();
      const found = call(qsa, doc, 'form[toolname]');
      for (let i = 0; i < found.length && i < MAX_FORMS; i++) {
        const form = found[i];
        const next = read(form);
        const old = forms.get(form);
        if (old && next && old.name === next.name && old.description === next.description &&
            old.schema === next.schema && old.autosubmit === next.autosubmit && registry.get(old.name) === old.entry) {
          old.params = next.params;
          seen.add(form);
          continue;
        }
        if (old) {
          drop(form, old, 'the form changed during the call');
          dirty = true;
        }
        if (!next) continue;
        if (registry.has(next.name)) {
          conflicts = true; // registered once the name is free again
          continue;
        }
        const state = { ...next, form, exec: null, entry: null };
        state.entry = {
          name: next.name, title: null, description: next.description, schema: next.schema,
          annotations: undefined, hints: undefined, exposed: [], face: 'form', execute: undefined, thisArg: undefined, form: state,
        };
        registry.set(next.name, state.entry);
        forms.set(form, state);
        seen.add(form);
        dirty = true;
      }
      forms.forEach((state, form) => {
        if (!seen.has(form)) {
          drop(form, state, 'the form was removed during the call');
          dirty = true;
        }
      });
      if (dirty) changed();
    }

    function drop(form, state, why) {
      forms.delete(form);
      if (registry.get(state.name) === state.entry) registry.delete(state.name);
      if (state.exec) state.exec.fail(why);
    }

    formsMayRegister = () => {
      if (conflicts) {
        conflicts = false;
        queueMicro(sync);
      }
    };

    // Only mutations that can touch a tool form cause a sync.
    const FORMISH = new SafeSet();
    for (const tag of ['form', 'input', 'select', 'textarea', 'option', 'optgroup', 'fieldset', 'label', 'datalist']) FORMISH.add(tag); // (before the page)
    function relevant(records) {
      for (let i = 0; i < records.length; i++) {
        const r = records[i];
        if (r.type === 'attributes') {
          const tag = call(localName, r.target);
          if (FORMISH.has(tag)) return true;
          continue;
        }
        if (forms.size > 0 && r.removedNodes.length > 0) return true;
        const added = r.addedNodes;
        for (let j = 0; j < added.length; j++) {
          const n = added[j];
          if (n.nodeType !== 1) continue;
          if (FORMISH.has(call(localName, n))) return true;
          if (call(elQuerySelector, n, 'form,input,select,textarea,option')) return true;
        }
      }
      return false;
    }
    let syncQueued = false;
    const MOobserve = G.MutationObserver.prototype.observe;
    const MOdisconnect = G.MutationObserver.prototype.disconnect;
    const observer = new G.MutationObserver((records) => {
      if (syncQueued || !relevant(records)) return;
      syncQueued = true;
      queueMicro(() => { syncQueued = false; sync(); });
    });
    const observe = () => call(MOobserve, observer, doc, {
      subtree: true, childList: true, attributes: true,
      attributeFilter: ['toolname', 'tooldescription', 'toolautosubmit', 'toolparamdescription', 'name', 'type', 'required',
        'disabled', 'value', 'multiple', 'min', 'max', 'step', 'pattern', 'minlength', 'maxlength', 'form', 'for', 'id', 'label'],
    });
    observe();
    ArrayPush(onNewDocument, () => {
      call(MOdisconnect, observer);
      forms.clear(); // (their registry entries went with the registry)
      conflicts = false;
      observe();
      sync();
    });

    // ---- invoking a form ----------------------------------------------------

    const fire = (el, type) => call(dispatch, el, new EventCtor(type, { bubbles: true, composed: type === 'input' }));
    const changedValue = (el) => { fire(el, 'input'); fire(el, 'change'); };

    // fillForm sets the controls named in input (only those), firing input
    // and change where a value changes. An unknown parameter is an error.
    fillForm = (state, input) => {
      const ks = ObjectKeys(input);
      for (let i = 0; i < ks.length; i++) {
        const key = ks[i];
        if (!state.params.has(key)) throw new Error(`Input contains a parameter "${key}" but there is no such parameter for the tool`);
      }
      for (let i = 0; i < ks.length; i++) {
        const key = ks[i];
        const p = state.params.get(key);
        const v = input[key];
        if (p.kind === 'checkbox') {
          const on = v === true || v === 'true' || v === 'on' || v === 1;
          if (call(get.checked, p.el) !== on) { call(set.checked, p.el, on); changedValue(p.el); }
        } else if (p.kind === 'radio') {
          const want = StringCtor(v);
          let radio;
          for (let i = 0; i < p.radios.length && !radio; i++) if (call(get.inputValue, p.radios[i]) === want) radio = p.radios[i];
          if (!radio) throw new Error(`"${want}" is not one of the values of ${key}`);
          if (!call(get.checked, radio)) { call(set.checked, radio, true); changedValue(radio); }
        } else if (p.kind === 'select' || p.kind === 'select-multiple') {
          const given = p.kind === 'select' ? [v] : isArray(v) ? v : [v];
          const wanted = [];
          for (let i = 0; i < given.length; i++) ArrayPush(wanted, StringCtor(given[i]));
          const opts = call(get.selectOptions, p.el);
          let found = 0;
          let touched = false;
          for (let i = 0; i < opts.length; i++) {
            const on = ArrayIncludes(wanted, call(get.optionValue, opts[i])) && (p.kind === 'select-multiple' || found === 0);
            if (on) found++;
            if (call(get.selected, opts[i]) !== on) { call(set.selected, opts[i], on); touched = true; }
          }
          if (p.kind === 'select' && found === 0) throw new Error(`"${wanted[0]}" is not one of the options of ${key}`);
          if (touched) changedValue(p.el);
        } else {
          const s = v === null ? '' : StringCtor(v);
          const isText = p.kind === 'textarea';
          const before = call(isText ? get.textareaValue : get.inputValue, p.el);
          if (before !== s) { call(isText ? set.textareaValue : set.inputValue, p.el, s); changedValue(p.el); }
        }
      }
    };

    // The submit events of agent invocations: event -> exec.
    const agentEvents = new SafeWeakMap();

    // submitForm submits a filled form (toolautosubmit) or waits for the
    // person to submit it, and resolves with the value the page passed to
    // SubmitEvent.respondWith(), or NAVIGATED when the submission navigates.
    submitForm = (entry, run, id) => new PromiseCtor((resolve, reject) => {
      const state = entry.form;
      const form = state.form;
      if (state.exec) return reject(new Error('the form is already being filled by another call'));
      const exec = {
        id, event: null, responded: null, script: false, done: false,
        finish() {
          exec.done = true;
          if (state.exec === exec) state.exec = null;
        },
        ok(v) { if (!exec.done) { exec.finish(); resolve(v); } },
        fail(msg) { if (!exec.done) { exec.finish(); reject(new Error(msg)); } },
      };
      state.exec = exec;
      run.form = exec;
      if (state.autosubmit) {
        if (!call(formNoValidate, form)) {
          const els = call(formElements, form);
          for (let i = 0; i < els.length; i++) {
            const el = els[i];
            if (get.validity(el)) return exec.fail(`Form validation failed: ${el.name || call(localName, el)}: ${el.validationMessage}`);
          }
        }
        try {
          call(requestSubmit, form);
        } catch (e) {
          return exec.fail(errorText(e));
        }
        return settle(state, exec);
      }
      // Without toolautosubmit a person checks the form and submits it:
      // bring its submit button into focus and wait.
      let button = null;
      const els = call(formElements, form);
      for (let i = 0; i < els.length; i++) {
        const el = els[i];
        const tag = call(localName, el);
        const t = tag === 'input' ? call(get.type, el) : tag === 'button' ? (el.type || 'submit') : '';
        if ((t === 'submit' || t === 'image') && !get.disabled(el)) { button = el; break; }
      }
      if (!button) return exec.fail('No submit button was found, but for a form without `toolautosubmit`, there must be a submit button');
      tryCall(() => call(focus, button));
      return undefined;
    });

    // settle decides the outcome once the submit event has been dispatched.
    function settle(state, exec) {
      if (exec.done) return;
      if (registry.get(state.name) !== state.entry || !call(isConnected, state.form)) {
        exec.fail('the form was removed or changed during the call');
        return;
      }
      if (exec.responded) {
        then(exec.responded, (v) => {
          if (registry.get(state.name) !== state.entry) exec.fail('the form was removed or changed during the call');
          else exec.ok(v);
        }, (e) => exec.fail(`respondWith promise was rejected: ${errorText(e)}`));
        return;
      }
      if (!exec.event) {
        exec.fail('Form validation failed: the form was not submitted');
        return;
      }
      if (exec.script) {
        exec.ok(NAVIGATED);
        return;
      }
      if (call(eventDefaultPrevented, exec.event)) {
        exec.fail("The page called preventDefault() on the 'submit' event without calling respondWith() with the tool result");
        return;
      }
      exec.ok(NAVIGATED);
    }

    // The first listener of all (capture, at the window) marks the submit
    // events of agent invocations.
    call(addListener, G, 'submit', (ev) => {
      const state = forms.get(call(eventTarget, ev));
      const exec = state && state.exec;
      if (!exec || exec.done || exec.event) return;
      exec.event = ev;
      agentEvents.set(ev, exec);
      // A person's submission: decide after the dispatch, in a later task.
      if (!state.autosubmit) queueTask(() => settle(state, exec));
    }, true);

    // A reset cancels the call: it fails with UnknownError and toolcancel
    // fires (the explainer: the agent is notified of the cancellation).
    // (Chromium 156 fires no toolcancel here; see the e2e gap list.)
    call(addListener, G, 'reset', (ev) => {
      const state = forms.get(call(eventTarget, ev));
      const exec = state && state.exec;
      if (exec && !exec.done) cancelLocal(exec.id, 'Tool execution cancelled by a form reset', 'Tool execution cancelled by a form reset');
    }, true);

    // form.submit() called by the page during an invocation (it fires no
    // submit event) counts as a navigating submission.
    defineProperty(H, 'submit', {
      configurable: true, enumerable: true, writable: true,
      value: { submit() {
        const state = forms.get(this);
        const exec = state && state.exec;
        if (exec && !exec.done) {
          exec.script = true;
          if (!exec.event) exec.ok(NAVIGATED);
        }
        return call(nativeSubmit, this);
      } }.submit,
    });

    // SubmitEvent.agentInvoked and respondWith() (declarative explainer).
    const SE = G.SubmitEvent.prototype;
    const submitter = getter(SE, 'submitter');
    const brand = (ev) => { call(submitter, ev); }; // throws TypeError for non-SubmitEvents
    defineProperties(SE, {
      agentInvoked: {
        configurable: true, enumerable: true,
        get: getOwnPropertyDescriptor({ get agentInvoked() { brand(this); return agentEvents.has(this); } }, 'agentInvoked').get,
      },
      respondWith: {
        configurable: true, enumerable: true, writable: true,
        value: { respondWith(agentResponse) {
          brand(this);
          const exec = agentEvents.get(this);
          if (!exec) throw domError('InvalidStateError', "Failed to execute 'respondWith' on 'SubmitEvent': the submission was not invoked by an agent.");
          if (call(eventPhase, this) === 0) throw domError('InvalidStateError', "Failed to execute 'respondWith' on 'SubmitEvent': the event is no longer being dispatched.");
          if (!call(eventDefaultPrevented, this)) throw domError('InvalidStateError', "Failed to execute 'respondWith' on 'SubmitEvent': To call respondWith, you must first call preventDefault.");
          if (exec.responded) throw domError('InvalidStateError', "Failed to execute 'respondWith' on 'SubmitEvent': respondWith was already called.");
          exec.responded = PromiseResolve(agentResponse);
        } }.respondWith,
      },
    });

    sync();
  }

  // ---- native WebMCP: observe registrations ---------------------------------

  // With native WebMCP the older face must share the native registry:
  // provideContext and clearContext remove tools registered with
  // document.modelContext.registerTool too. So registerTool is wrapped to add
  // a signal of ours (AbortSignal.any with the page's); the native method
  // still does all the work and its promise is returned unchanged.
  const owned = new SafeMap(); // name -> {ctrl} for native registrations
  let nativeRegister = null;
  let nativeMC = null;
  if (hasNative) {
    const proto = G.ModelContext && G.ModelContext.prototype;
    nativeRegister = proto && proto.registerTool;
    nativeMC = tryCall(() => doc.modelContext);
    ArrayPush(onNewDocument, () => {
      owned.clear();
      nativeMC = tryCall(() => doc.modelContext);
    });
    if (typeof nativeRegister === 'function') {
      defineProperty(proto, 'registerTool', {
        configurable: true, enumerable: true, writable: true,
        value: { registerTool(tool, options = undefined) {
          let args = [tool, options];
          let rec = null;
          let name;
          if (this !== nativeMC) syncDoc();
          try {
            if (this === nativeMC && isObject(tool) && (options === undefined || options === null || isObject(options))) {
              const n = tool.name;
              name = n === undefined || typeof n === 'symbol' ? undefined : StringCtor(n);
              const o = options || {};
              const ctrl = new AbortControllerCtor();
              const own = call(controllerSignal, ctrl);
              const s = o.signal;
              const signal = s === undefined ? own : call(AbortSignalAny, AbortSignalCtor, [s, own]);
              args = [tool, { exposedTo: o.exposedTo, signal }];
              if (name !== undefined && !owned.has(name) && !isAborted(signal)) {
                rec = { ctrl };
                onAbort(signal, () => { if (owned.get(name) === rec) owned.delete(name); });
              }
            }
          } catch {
            args = [tool, options]; // let the native method report the error
            rec = null;
          }
          const p = ReflectApply(nativeRegister, this, args);
          if (rec) {
            owned.set(name, rec);
            then(p, undefined, () => { if (owned.get(name) === rec) owned.delete(name); });
          }
          return p;
        } }.registerTool,
      });
    }
  }

  // ---- the older face: navigator.modelContext -------------------------------

  // The same registry through the older API. Declarative form tools belong
  // to their forms and are left alone by provideContext and clearContext.
  const store = hasNative ? {
    has: (n) => owned.has(n) || registry.has(n),
    add(t, schema, tool) {
      // A native registration with a signal of ours.
      const ctrl = new AbortControllerCtor();
      const rec = { ctrl };
      const def = { name: t.name, description: t.description, execute: (input, opts) => call(t.execute, tool, input, executeOptions(opts && opts.signal)) };
      if (t.title !== null) def.title = t.title;
      if (t.inputSchema !== undefined) def.inputSchema = JSONparse(schema);
      if (t.annotations) def.annotations = t.annotations;
      owned.set(t.name, rec);
      registry.set(t.name, makeEntry(t, schema, 'legacy', tool));
      const p = ReflectApply(nativeRegister, nativeMC, [def, { signal: call(controllerSignal, ctrl) }]);
      then(p, undefined, () => {
        if (owned.get(t.name) === rec) owned.delete(t.name);
        registry.delete(t.name);
      });
    },
    remove(n) {
      const rec = owned.get(n);
      if (!rec) return false;
      owned.delete(n);
      registry.delete(n);
      abortController(rec.ctrl);
      return true;
    },
    names: () => keysOf(owned),
    commit() { pingGo(); },
  } : {
    has: (n) => registry.has(n),
    add(t, schema, tool) { registry.set(t.name, makeEntry(t, schema, 'legacy', tool)); },
    remove(n) {
      const e = registry.get(n);
      if (!e || e.face === 'form') return false;
      registry.delete(n);
      return true;
    },
    names: () => {
      const out = [];
      registry.forEach((e, n) => { if (e.face !== 'form') ArrayPush(out, n); });
      return out;
    },
    commit() { changed(); formsMayRegister(); },
  };

  function legacyConvert(tool, what, taken) {
    const t = convertTool(tool, what);
    const schema = checkTool(t, what, taken);
    return { t, schema, tool };
  }

  const legacy = freeze({
    // provideContext({tools}) replaces every tool (those of
    // document.modelContext.registerTool too) with tools, all or nothing.
    provideContext(options = undefined) {
      syncDoc();
      if (options !== undefined && options !== null && !isObject(options)) throw new TypeError('provideContext: the options are not an object');
      const tools = options ? options.tools : undefined;
      if (tools !== undefined && !isArray(tools)) throw new TypeError('provideContext: tools must be an array');
      const seen = new SafeSet();
      const list = [];
      const names = store.names();
      const before = new SafeSet();
      for (let i = 0; i < names.length; i++) before.add(names[i]);
      // The page's array is read by index (as older polyfills did), not
      // with its iterator.
      const n = tools ? tools.length : 0;
      for (let i = 0; i < n; i++) {
        // Names being replaced are free; forms keep theirs.
        const c = legacyConvert(tools[i], 'provideContext', (name) => seen.has(name) || (store.has(name) && !before.has(name)));
        seen.add(c.t.name);
        ArrayPush(list, c);
      }
      for (let i = 0; i < names.length; i++) store.remove(names[i]);
      for (let i = 0; i < list.length; i++) store.add(list[i].t, list[i].schema, list[i].tool);
      store.commit();
    },
    // clearContext() removes every tool (forms excepted).
    clearContext() {
      syncDoc();
      let removed = false;
      const names = store.names();
      for (let i = 0; i < names.length; i++) removed = store.remove(names[i]) || removed;
      if (removed) store.commit();
    },
    // registerTool(tool) adds one tool at once, and throws at once on a
    // duplicate name or a bad tool. It returns {unregister()} as older
    // polyfills did.
    registerTool(tool) {
      syncDoc();
      const c = legacyConvert(tool, 'registerTool', store.has);
      store.add(c.t, c.schema, c.tool);
      store.commit();
      const name = c.t.name;
      return freeze({ unregister() { if (store.remove(name)) store.commit(); } });
    },
    // unregisterTool(name) removes one tool; an unknown name is an
    // InvalidStateError.
    unregisterTool(name) {
      syncDoc();
      const n = toDOMString(name, 'unregisterTool');
      if (!store.remove(n)) throw domError('InvalidStateError', `unregisterTool: no tool named "${n}"`);
      store.commit();
    },
  });

  // ---- an older polyfill loaded after this script ---------------------------
  //
  // Decision: ours keeps working, and so does theirs. A page may load its
  // own copy of an older WebMCP polyfill after us. Those that feature-detect
  // find navigator.modelContext and use it. Those that install themselves
  // anyway do one of:
  //   navigator.modelContext = X   /   window.modelContext = X
  //       (our accessors have setters, so this never throws, even in strict
  //       code), or
  //   Object.defineProperty(navigator | Navigator.prototype | window, 'modelContext', …)
  //       (Object.defineProperty, Object.defineProperties and
  //       Reflect.defineProperty are wrapped to notice it; they behave
  //       exactly as before).
  // Either way X becomes what the page reads, unchanged in behaviour, and X is
  // "adopted": its provideContext, clearContext, registerTool and
  // unregisterTool are wrapped in place to call X's own method first and
  // then mirror the change into our registry (best effort, never throwing).
  // So the page's polyfill works as written, and its tools still reach
  // document.modelContext.getTools() and Go. A frozen X cannot be wrapped:
  // it is honoured but not mirrored. document.modelContext is never handed
  // over.
  const adopted = new SafeWeakSet();
  function removeAll() {
    const names = store.names();
    for (let i = 0; i < names.length; i++) store.remove(names[i]);
  }
  const mirror = {
    provideContext(args) {
      const o = args[0];
      const tools = o && isArray(o.tools) ? o.tools : [];
      removeAll();
      const n = tools.length;
      for (let i = 0; i < n; i++) tryCall(() => { const c = legacyConvert(tools[i], 'provideContext', store.has); store.add(c.t, c.schema, c.tool); });
      store.commit();
    },
    clearContext() {
      removeAll();
      store.commit();
    },
    registerTool(args, result) {
      const c = legacyConvert(args[0], 'registerTool', () => false);
      store.remove(c.t.name);
      if (store.has(c.t.name)) return;
      store.add(c.t, c.schema, c.tool);
      store.commit();
      const name = c.t.name;
      // Older polyfills return {unregister()}: follow it too.
      if (isObject(result) && typeof result.unregister === 'function' && isExtensible(result)) {
        const un = result.unregister;
        tryCall(() => defineProperty(result, 'unregister', {
          configurable: true, writable: true, value: { unregister(...a) {
            const r = ReflectApply(un, this, a);
            if (store.remove(name)) store.commit();
            return r;
          } }.unregister,
        }));
      }
    },
    unregisterTool(args) {
      if (store.remove(toDOMString(args[0], 'unregisterTool'))) store.commit();
    },
  };
  function adopt(x) {
    if (!isObject(x) || x === legacy || adopted.has(x)) return;
    adopted.add(x);
    if (!isExtensible(x)) return;
    const methods = ObjectKeys(mirror);
    for (let i = 0; i < methods.length; i++) {
      const m = methods[i];
      let orig;
      try { orig = x[m]; } catch { continue; }
      if (typeof orig !== 'function') continue;
      const wrapped = { [m](...args) {
        const r = ReflectApply(orig, this, args);
        try { mirror[m](args, r); } catch { /* their semantics won */ }
        return r;
      } }[m];
      tryCall(() => defineProperty(x, m, { value: wrapped, writable: true, configurable: true, enumerable: false }));
    }
  }

  const slots = { navigator: { set: false, value: undefined }, window: { set: false, value: undefined } };
  ArrayPush(onNewDocument, () => {
    slots.navigator = { set: false, value: undefined };
    slots.window = { set: false, value: undefined };
  });
  const face = (slot) => {
    const accessors = {
      get modelContext() { syncDoc(); return slots[slot].set ? slots[slot].value : legacy; },
      set modelContext(v) {
        syncDoc();
        if (v === legacy) { slots[slot].set = false; return; }
        slots[slot].set = true;
        slots[slot].value = v;
        adopt(v);
      },
    };
    const { get, set } = getOwnPropertyDescriptor(accessors, 'modelContext');
    return { configurable: true, enumerable: slot === 'navigator', get, set };
  };
  defineProperty(G.Navigator.prototype, 'modelContext', face('navigator'));
  defineProperty(G, 'modelContext', face('window'));

  const nav = G.navigator;
  const NavProto = G.Navigator.prototype;
  const watched = (o) => o === nav || o === NavProto || o === G;
  function recheck() {
    adopt(tryCall(() => nav.modelContext));
    adopt(tryCall(() => G.modelContext));
  }
  const odp = Object.defineProperty;
  const odps = Object.defineProperties;
  const rdp = Reflect.defineProperty;
  const wrappers = {
    defineProperty(o, p, d) {
      const r = odp(o, p, d);
      if (watched(o) && p === 'modelContext') recheck();
      return r;
    },
    defineProperties(o, props) {
      const r = odps(o, props);
      if (watched(o)) recheck();
      return r;
    },
    reflectDefineProperty(o, p, d) {
      const r = rdp(o, p, d);
      if (r && watched(o) && p === 'modelContext') recheck();
      return r;
    },
  };
  defineProperty(wrappers.reflectDefineProperty, 'name', { value: 'defineProperty' });
  defineProperty(Object, 'defineProperty', { value: wrappers.defineProperty, writable: true, configurable: true, enumerable: false });
  defineProperty(Object, 'defineProperties', { value: wrappers.defineProperties, writable: true, configurable: true, enumerable: false });
  ReflectDefineProperty(Reflect, 'defineProperty', { value: wrappers.reflectDefineProperty, writable: true, configurable: true, enumerable: false });

  // ---- the bridge Go holds --------------------------------------------------

  const goCalls = new SafeMap(); // Go call id -> local id
  const bridge = freeze({
    // info describes this document.
    info() {
      syncDoc();
      return JSONstringify({ __proto__: null, native: hasNative, url: G.location.href, origin: G.location.origin, title: titleOf(doc) });
    },
    // list returns the registry as JSON. Tools over the limits are replaced
    // by a refusal, so a page cannot make Go read megabytes per change.
    // (The objects have no prototype and the array an own toJSON of
    // undefined, so a toJSON the page put on Object.prototype or
    // Array.prototype is never called.)
    list(maxTools, maxDescription, maxSchema) {
      syncDoc();
      const tools = [];
      defineProperty(tools, 'toJSON', { value: undefined });
      let overflow = 0;
      registry.forEach((e) => {
        if (tools.length >= maxTools) { overflow++; return; }
        if (e.description.length > maxDescription) {
          ArrayPush(tools, { __proto__: null, name: StringSlice(e.name, 0, 128), refused: `its description is ${e.description.length} characters, over the limit of ${maxDescription}` });
          return;
        }
        if (e.schema !== undefined && e.schema.length > maxSchema) {
          ArrayPush(tools, { __proto__: null, name: StringSlice(e.name, 0, 128), refused: `its inputSchema is ${e.schema.length} characters of JSON, over the limit of ${maxSchema}` });
          return;
        }
        let annotations;
        if (e.annotations || e.hints) annotations = { __proto__: null, ...e.annotations, ...e.hints };
        ArrayPush(tools, { __proto__: null, name: e.name, title: e.title === null ? '' : e.title, description: e.description, inputSchema: e.schema, annotations });
      });
      return JSONstringify({ __proto__: null, url: G.location.href, title: titleOf(doc), tools, overflow });
    },
    // call runs a tool like executeTool does (toolactivated, a real
    // AbortSignal) and resolves with a plain object of strings, numbers and
    // booleans ({ok, kind, value, truncated, error}) that Go reads by value:
    // the value (a JSON string for a JSON result) is not encoded again. It
    // is cut to maxBytes characters so a page cannot flood the connection.
    call(name, inputJSON, callId, maxBytes) {
      syncDoc();
      const id = 'go:' + StringCtor(callId);
      goCalls.set(StringCtor(callId), id);
      return new PromiseCtor((resolve) => {
        runLocal(StringCtor(name), StringCtor(inputJSON), id, (r) => {
          goCalls.delete(StringCtor(callId));
          // No prototype: resolve() would otherwise look up a then the page
          // may have put on Object.prototype.
          const out = { __proto__: null, ...r };
          if (out.kind === 'navigated') {
            out.kind = 'string';
            out.value = 'The form was submitted; the page is navigating to show the result.';
          }
          if (out.ok && out.value !== undefined && out.value.length > maxBytes) {
            out.truncated = out.value.length;
            out.value = StringSlice(out.value, 0, maxBytes);
          }
          if (!out.ok && out.error.length > maxBytes) out.error = StringSlice(out.error, 0, maxBytes) + ' [cut]';
          resolve(out);
        });
      });
    },
    // cancel aborts a call in flight: the tool's signal aborts with an
    // AbortError and toolcancel fires.
    cancel(callId, reason) {
      const id = goCalls.get(StringCtor(callId));
      if (id) cancelLocal(id, StringCtor(reason));
    },
  });

  // Hand the bridge to Go. Go accepts the first marked message of each
  // execution context only, and this script runs before the page.
  call(consoleDebug, console, '__webmcp_cdp_bridge__:' + NONCE, bridge);
})();
