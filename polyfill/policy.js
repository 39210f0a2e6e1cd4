// ---- Permissions Policy: the "tools" feature -------------------------------

// Chromium gates document.modelContext on the policy-controlled feature
// "tools", whose default allowlist is 'self': a top-level document may use
// it unless its Permissions-Policy header says otherwise; a same-origin frame
// inherits its parent's; a cross-origin (or sandboxed) frame needs its
// <iframe> to delegate it (allow="tools"). In a document where it is
// disabled, registerTool(), getTools() and executeTool() reject with
// NotAllowedError and the document's tools never exist.
//
// A browser without WebMCP does not know the feature, so the page cannot
// tell (document.featurePolicy does not list it) and must not be asked: Go
// decides from CDP (the frame owner's allow attribute, the response headers,
// the frame tree) and hands the verdict over through bridge.policy as soon as
// it holds the bridge. Until then the verdict is pending: the current API's
// methods wait for it (and then behave as if called at that moment); the
// older API and declarative forms register tentatively, and nothing of the
// document is listed, to Go or to other documents. A denial drops them.
const POLICY_MESSAGE = 'Access to the feature "tools" is disallowed by permissions policy.';
// 'allowed' | 'denied' | 'pending'. A native document enforces the policy
// itself; a standalone copy (a site's own tests) has no Go to ask.
let policy = hasNative || NONCE === 'standalone' ? 'allowed' : 'pending';
let policyWaiters = [];
// The names of the tools this document tried to register where the feature
// is disabled (registerTool, provideContext, a <form toolname>, or a
// tentative registration a denial dropped). bridge.list hands them to Go,
// which reports each as refused by the policy: a denied document that
// registers nothing (an ad's frame, a video player) is not reported at all.
// '*' stands for a tool whose name could not be read without running page
// code. Bounded: past MAX_DENIED names only a count is kept.
const MAX_DENIED = 32;
const deniedNames = new SafeSet();
let deniedMore = 0;

function policyError() {
  return domError('NotAllowedError', POLICY_MESSAGE);
}

// noteDenied records a tool the document tried to register where the
// feature is disabled, and tells Go once per new name.
function noteDenied(name) {
  if (policy !== 'denied') return;
  const n = typeof name === 'string' && name !== '' ? StringSlice(name, 0, 128) : '*';
  if (deniedNames.has(n)) return;
  if (deniedNames.size >= MAX_DENIED) {
    if (deniedMore++ === 0) pingGo();
    return;
  }
  deniedNames.add(n);
  pingGo();
}

// ownName reads the name of a tool object the page passed, from an own
// data property only: a denied call must not run page code (a getter) that
// native Chromium would not run.
function ownName(tool) {
  if (!isObject(tool)) return '*';
  const d = getOwnPropertyDescriptor(tool, 'name');
  return d && typeof d.value === 'string' ? d.value : '*';
}

// gate runs steps (which return a promise) now, or once the verdict is in;
// with the feature disabled it rejects with NotAllowedError instead, and
// notes registering (the name given) as refused.
function gate(steps, registering = undefined) {
  // A document without a browsing context (a removed frame's) will never
  // get a verdict: its calls reject at once, as not fully active.
  if (policy === 'allowed' || !active()) return steps();
  if (policy === 'denied') {
    if (registering !== undefined) noteDenied(registering);
    return PromiseReject(policyError());
  }
  return new PromiseCtor((resolve, reject) => {
    ArrayPush(policyWaiters, () => {
      if (policy !== 'allowed') {
        if (registering !== undefined) noteDenied(registering);
        return reject(policyError());
      }
      let p;
      try { p = steps(); } catch (e) { return reject(e); }
      return then(p, resolve, reject);
    });
  });
}

// checkPolicy throws NotAllowedError where the feature is disabled (the
// synchronous older API), noting the names of the tools that names(),
// when given, reads from the call's arguments.
function checkPolicy(what, names = undefined) {
  if (policy !== 'denied') return;
  if (names) {
    const list = names();
    for (let i = 0; i < list.length; i++) noteDenied(list[i]);
  }
  throw domError('NotAllowedError', `${what}: ${POLICY_MESSAGE}`);
}

// setPolicy records Go's verdict, once per document, and releases the
// calls that waited for it, in the order they were made. A denial drops
// the tools registered tentatively.
function setPolicy(allowed) {
  if (policy !== 'pending') return false;
  policy = allowed ? 'allowed' : 'denied';
  const announce = changedWhilePending;
  changedWhilePending = false;
  const had = registry.size > 0;
  if (!allowed && had) {
    registry.forEach((e) => noteDenied(e.name));
    registry.clear();
  }
  // The tools registered tentatively are listed from now on (allowed: the
  // toolchange held back by changed() goes out now), or dropped (denied).
  if (allowed ? announce : had) changed();
  const waiters = policyWaiters;
  policyWaiters = [];
  for (let i = 0; i < waiters.length; i++) tryCall(waiters[i]);
  return true;
}

// deniedList is what bridge.list says of the refused registrations: the
// names, and how many more were not kept.
function deniedList() {
  const names = [];
  defineProperty(names, 'toJSON', { value: undefined });
  deniedNames.forEach((n) => ArrayPush(names, n));
  return { __proto__: null, names, more: deniedMore };
}
