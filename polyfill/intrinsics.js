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
const docScripts = getter(Document.prototype, 'scripts');
// startedBefore (bridge.js tells Go; pageserver.js asks late) says whether the document held scripts of the page when
// this script came in: it was injected into a live document (attach mode,
// or a tab Chromium did not hold until the setup was in), and whatever
// those scripts registered through no API of theirs is lost until a
// reload. A new document has no element yet when this script runs.
const startedBefore = (() => {
  try { return call(docScripts, doc).length > 0; } catch { return false; }
})();

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
