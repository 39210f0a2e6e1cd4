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
  userscriptsOnNewDocument(); // registry.js: after the state above is new
  pingGo();
}
