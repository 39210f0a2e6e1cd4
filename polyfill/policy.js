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

function policyError() {
  return domError('NotAllowedError', POLICY_MESSAGE);
}

// gate runs steps (which return a promise) now, or once the verdict is in;
// with the feature disabled it rejects with NotAllowedError instead.
function gate(steps) {
  // A document without a browsing context (a removed frame's) will never
  // get a verdict: its calls reject at once, as not fully active.
  if (policy === 'allowed' || !active()) return steps();
  if (policy === 'denied') return PromiseReject(policyError());
  return new PromiseCtor((resolve, reject) => {
    ArrayPush(policyWaiters, () => {
      if (policy !== 'allowed') return reject(policyError());
      let p;
      try { p = steps(); } catch (e) { return reject(e); }
      return then(p, resolve, reject);
    });
  });
}

// checkPolicy throws NotAllowedError where the feature is disabled (the
// synchronous older API).
function checkPolicy(what) {
  if (policy === 'denied') throw domError('NotAllowedError', `${what}: ${POLICY_MESSAGE}`);
}

// setPolicy records Go's verdict, once per document, and releases the
// calls that waited for it, in the order they were made. A denial drops
// the tools registered tentatively.
function setPolicy(allowed) {
  if (policy !== 'pending') return false;
  policy = allowed ? 'allowed' : 'denied';
  if (!allowed && registry.size > 0) {
    registry.clear();
    changed();
  }
  const waiters = policyWaiters;
  policyWaiters = [];
  for (let i = 0; i < waiters.length; i++) tryCall(waiters[i]);
  return true;
}
