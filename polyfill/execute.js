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
    // execute starts first, then toolactivated fires, as in Chromium
    // (whose order the web-platform-tests observe: tool started,
    // toolactivated, …); the draft's prose fires the event first.
    running.set(id, run);
    try {
      promise = PromiseResolve(call(entry.execute, entry.thisArg, input, executeOptions(call(controllerSignal, ctrl))));
    } catch (e) {
      promise = PromiseReject(e);
    }
    fireToolEvent('toolactivated', name);
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
    if (current && policy === 'allowed') call(dispatch, current, new EventCtor('toolchange'));
  },
  // list returns this document's tools as plain data.
  list(callerOrigin) {
    const out = [];
    if (!active() || policy !== 'allowed') return out;
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
