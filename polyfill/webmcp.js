// webmcp-cdp page script.
//
// Go injects this with Page.addScriptToEvaluateOnNewDocument, so it runs in
// the main world of every document before any script of the page. It gives
// the page both faces of the WebMCP API over one registry per document:
//
//   - document.modelContext: the current W3C draft (registerTool with
//     {signal} returning a Promise, getTools, executeTool, events);
//   - navigator.modelContext: the older API that deployed sites call
//     (provideContext, clearContext, registerTool, unregisterTool, and
//     execute(input, agent) with agent.requestUserInteraction).
//
// The bridge to Go cannot be reached or forged by the page. The registry
// lives in this closure. The script hands one frozen bridge object to Go
// through console.debug (captured before the page runs, and marked with a
// nonce the page never sees); Go keeps a handle to it and calls its methods
// with Runtime.callFunctionOn. The runtime binding only says "something
// changed"; it carries no data, and the page cannot reach it (the global is
// deleted here).
//
// The placeholders below are replaced by Go (polyfill.Script).
(() => {
  'use strict';
  const NONCE = '__WEBMCP_CDP_NONCE__';
  const BINDING = '__WEBMCP_CDP_BINDING__';
  const BACKEND = '__WEBMCP_CDP_BACKEND__'; // "auto" | "polyfill" | "native"

  // Intrinsics captured before the page can replace them.
  const G = globalThis;
  const JSONstringify = JSON.stringify;
  const JSONparse = JSON.parse;
  const defineProperty = Object.defineProperty;
  const freeze = Object.freeze;
  const isArray = Array.isArray;
  const ObjectKeys = Object.keys;
  const consoleDebug = console.debug;
  const PromiseCtor = Promise;
  const AbortControllerCtor = G.AbortController;
  const EventTargetCtor = G.EventTarget;
  const EventCtor = G.Event;
  const DOMExceptionCtor = G.DOMException;
  const MapCtor = Map;
  const call = Function.prototype.call.bind(Function.prototype.call);
  const dispatch = EventTarget.prototype.dispatchEvent;
  const StringCtor = String;
  const queueMicro = G.queueMicrotask.bind(G);

  // The binding: take it and hide it, so only this script can ping Go.
  let ping = null;
  if (typeof G[BINDING] === 'function') {
    ping = G[BINDING];
    try { delete G[BINDING]; } catch (_) { /* non-configurable: leave it */ }
  }

  // One installation per document. The window of a popup is reused by its
  // first navigation, so a guard on the global would skip the new document.
  const GUARD = '__webmcpCdpInstalled';
  if (Object.prototype.hasOwnProperty.call(document, GUARD)) return;
  defineProperty(document, GUARD, { value: true });

  // WebMCP is a [SecureContext] API.
  if (!G.isSecureContext) return;

  const nativeDescriptor = Object.getOwnPropertyDescriptor(G.Document.prototype, 'modelContext');
  const hasNative = !!nativeDescriptor && BACKEND !== 'polyfill';

  const NAME_RE = /^[A-Za-z0-9_.-]{1,128}$/;

  /** @type {Map<string, {name:string,title:string,description:string,schema:string|undefined,annotations:object|undefined,execute:Function,face:string}>} */
  const registry = new MapCtor();

  // Changes are announced once per microtask: a page that registers 100
  // tools in a loop costs one ping and one read from Go.
  let pingQueued = false;
  function changed() {
    if (pingQueued || !ping) return;
    pingQueued = true;
    queueMicro(() => {
      pingQueued = false;
      try { ping('changed'); } catch (_) { /* context going away */ }
    });
  }

  function domError(name, message) {
    return new DOMExceptionCtor(message, name);
  }

  // Validates a tool dictionary as the W3C draft does, and returns the entry
  // to store. Throws TypeError or InvalidStateError.
  function makeEntry(tool, face) {
    if (tool === null || typeof tool !== 'object') throw new TypeError('registerTool: the tool must be an object');
    const name = tool.name;
    const description = tool.description;
    const execute = tool.execute;
    if (name === undefined) throw new TypeError('registerTool: the tool has no name');
    if (description === undefined) throw new TypeError(`registerTool: tool "${name}" has no description`);
    if (execute === undefined) throw new TypeError(`registerTool: tool "${name}" has no execute`);
    if (typeof execute !== 'function') throw new TypeError(`registerTool: execute of tool "${name}" is not callable`);
    const nameStr = StringCtor(name);
    if (registry.has(nameStr)) throw domError('InvalidStateError', `registerTool: a tool named "${nameStr}" is already registered`);
    if (!NAME_RE.test(nameStr)) throw domError('InvalidStateError', `registerTool: the name "${nameStr}" is not 1-128 characters of A-Z a-z 0-9 _ . -`);
    const descStr = StringCtor(description);
    if (descStr === '') throw domError('InvalidStateError', `registerTool: tool "${nameStr}" has an empty description`);
    let schema;
    if (tool.inputSchema !== undefined) {
      if (tool.inputSchema === null || typeof tool.inputSchema !== 'object') {
        throw new TypeError(`registerTool: inputSchema of tool "${nameStr}" is not an object`);
      }
      schema = JSONstringify(tool.inputSchema); // a cyclic schema throws its own TypeError
      if (schema === undefined) throw new TypeError(`registerTool: inputSchema of tool "${nameStr}" does not serialize to JSON`);
    }
    let annotations;
    if (tool.annotations && typeof tool.annotations === 'object') {
      annotations = {};
      for (const k of ObjectKeys(tool.annotations)) {
        const v = tool.annotations[k];
        if (typeof v === 'boolean' || typeof v === 'string' || typeof v === 'number') annotations[k] = v;
      }
    }
    const title = tool.title === undefined ? '' : StringCtor(tool.title);
    return { name: nameStr, title, description: descStr, schema, annotations, execute, face };
  }

  // ---- the current W3C face: document.modelContext ----------------------

  const constructing = { ok: false };
  class ModelContext extends EventTargetCtor {
    constructor() {
      if (!constructing.ok) throw new TypeError('Illegal constructor');
      super();
    }

    registerTool(tool, options = {}) {
      try {
        const signal = options && options.signal;
        if (signal && signal.aborted) return PromiseCtor.reject(signal.reason);
        const entry = makeEntry(tool, 'current');
        registry.set(entry.name, entry);
        if (signal) {
          signal.addEventListener('abort', () => {
            if (registry.get(entry.name) === entry) {
              registry.delete(entry.name);
              fireToolChange();
            }
          }, { once: true });
        }
        fireToolChange();
        return PromiseCtor.resolve(undefined);
      } catch (err) {
        return PromiseCtor.reject(err);
      }
    }

    getTools() {
      const out = [];
      for (const e of [...registry.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
        const t = { name: e.name, title: e.title, description: e.description, origin: G.location.origin, window: G };
        if (e.schema !== undefined) t.inputSchema = JSONparse(e.schema);
        if (e.annotations) t.annotations = { ...e.annotations };
        out.push(t);
      }
      return PromiseCtor.resolve(out);
    }

    executeTool(tool, input, options = {}) {
      const signal = options && options.signal;
      if (signal && signal.aborted) throw signal.reason;
      const name = tool && typeof tool === 'object' ? tool.name : tool;
      return run(StringCtor(name), input === undefined ? '{}' : JSONstringify(input), signal).then((r) => {
        if (!r.ok) throw domError('UnknownError', r.error);
        return r.value;
      });
    }
  }

  let current = null;
  function fireToolChange() {
    changed();
    if (current) call(dispatch, current, new EventCtor('toolchange'));
  }

  if (!hasNative) {
    constructing.ok = true;
    current = new ModelContext();
    constructing.ok = false;
    const doc = document;
    defineProperty(G.Document.prototype, 'modelContext', {
      configurable: true,
      enumerable: true,
      get() { return this === doc ? current : undefined; },
    });
    defineProperty(G, 'ModelContext', { value: ModelContext, configurable: true, writable: true });
  }

  // ---- the older face: navigator.modelContext ---------------------------

  // With native WebMCP the legacy face is layered on the native API: each
  // legacy tool is a native registration with its own AbortController.
  const nativeCtrls = new MapCtor();
  function legacyAdd(tool) {
    const entry = makeEntry(tool, 'legacy');
    if (hasNative) {
      const ctrl = new AbortControllerCtor();
      const exec = entry.execute;
      const wrapped = { ...tool, execute: (input, client) => exec(input, withInteraction(client)) };
      document.modelContext.registerTool(wrapped, { signal: ctrl.signal }).catch(() => nativeCtrls.delete(entry.name));
      nativeCtrls.set(entry.name, ctrl);
    }
    registry.set(entry.name, entry);
  }
  function legacyRemove(name) {
    registry.delete(name);
    const ctrl = nativeCtrls.get(name);
    if (ctrl) { nativeCtrls.delete(name); ctrl.abort(); }
  }

  const legacy = freeze({
    provideContext(options = {}) {
      const tools = options && options.tools;
      if (tools !== undefined && !isArray(tools)) throw new TypeError('provideContext: tools must be an array');
      // Validate all first, so a bad tool leaves the old set in place.
      const seen = new MapCtor();
      for (const t of tools || []) {
        const n = t && t.name !== undefined ? StringCtor(t.name) : undefined;
        if (n !== undefined && seen.has(n)) throw domError('InvalidStateError', `provideContext: two tools are named "${n}"`);
        seen.set(n, true);
      }
      for (const n of [...registry.keys()]) legacyRemove(n);
      for (const t of tools || []) legacyAdd(t);
      fireToolChange();
    },
    clearContext() {
      for (const n of [...registry.keys()]) legacyRemove(n);
      fireToolChange();
    },
    registerTool(tool) {
      legacyAdd(tool);
      fireToolChange();
    },
    unregisterTool(name) {
      const n = StringCtor(name);
      if (!registry.has(n)) throw domError('InvalidStateError', `unregisterTool: no tool named "${n}"`);
      legacyRemove(n);
      fireToolChange();
    },
  });
  defineProperty(G.Navigator.prototype, 'modelContext', {
    configurable: true,
    enumerable: true,
    get() { return legacy; },
  });

  // The client object passed as execute's second argument serves both APIs:
  // {signal} for the current draft, requestUserInteraction for the older.
  function withInteraction(client) {
    const c = client && typeof client === 'object' ? client : {};
    return {
      signal: c.signal,
      requestUserInteraction(cb) {
        if (typeof cb !== 'function') return PromiseCtor.reject(new TypeError('requestUserInteraction: the callback is not a function'));
        return PromiseCtor.resolve().then(() => cb());
      },
    };
  }

  // ---- execution --------------------------------------------------------

  const inflight = new MapCtor(); // call id -> AbortController

  // Runs a tool. Resolves (never rejects) with {ok, kind, value} or {ok:false, error}.
  function run(name, inputJSON, outerSignal, callId) {
    const entry = registry.get(name);
    if (!entry) return PromiseCtor.resolve({ ok: false, error: `no tool named "${name}" is registered in this page` });
    let input;
    try {
      input = JSONparse(inputJSON);
    } catch (e) {
      return PromiseCtor.resolve({ ok: false, error: `the input is not JSON: ${e && e.message}` });
    }
    if (input === null || typeof input !== 'object') {
      return PromiseCtor.resolve({ ok: false, error: 'the input must be a JSON object' });
    }
    const ctrl = new AbortControllerCtor();
    if (callId !== undefined) inflight.set(callId, ctrl);
    if (outerSignal) outerSignal.addEventListener('abort', () => ctrl.abort(outerSignal.reason), { once: true });
    const client = withInteraction({ signal: ctrl.signal });
    const aborted = new PromiseCtor((resolve) => {
      ctrl.signal.addEventListener('abort', () => {
        const r = ctrl.signal.reason;
        resolve({ ok: false, error: `the call was cancelled${r && r.message ? ': ' + r.message : ''}` });
      }, { once: true });
    });
    const done = PromiseCtor.resolve()
      .then(() => entry.execute.call(undefined, input, client))
      .then((value) => {
        if (typeof value === 'string') return { ok: true, kind: 'string', value };
        if (value === undefined) return { ok: true, kind: 'undefined' };
        const json = JSONstringify(value);
        if (json === undefined) return { ok: true, kind: 'undefined' };
        return { ok: true, kind: 'json', value: json };
      }, (err) => ({ ok: false, error: errorText(err) }));
    return PromiseCtor.race([done, aborted]).finally(() => {
      if (callId !== undefined) inflight.delete(callId);
    });
  }

  function errorText(err) {
    try {
      if (err && typeof err === 'object' && 'message' in err) {
        const n = err.name && err.name !== 'Error' ? StringCtor(err.name) + ': ' : '';
        return n + StringCtor(err.message);
      }
      return StringCtor(err);
    } catch (_) {
      return 'the tool threw a value that cannot be shown';
    }
  }

  // ---- the bridge Go holds ----------------------------------------------

  const bridge = freeze({
    // info describes this document.
    info() {
      return JSONstringify({ native: hasNative, url: G.location.href, origin: G.location.origin, title: document.title });
    },
    // list returns the registry as JSON. Tools over the limits are replaced
    // by a refusal, so a page cannot make Go read megabytes per change.
    list(maxTools, maxDescription, maxSchema) {
      const tools = [];
      let overflow = 0;
      for (const e of registry.values()) {
        if (tools.length >= maxTools) { overflow++; continue; }
        if (e.description.length > maxDescription) {
          tools.push({ name: e.name.slice(0, 128), refused: `its description is ${e.description.length} characters, over the limit of ${maxDescription}` });
          continue;
        }
        if (e.schema !== undefined && e.schema.length > maxSchema) {
          tools.push({ name: e.name.slice(0, 128), refused: `its inputSchema is ${e.schema.length} characters of JSON, over the limit of ${maxSchema}` });
          continue;
        }
        tools.push({ name: e.name, title: e.title, description: e.description, inputSchema: e.schema, annotations: e.annotations });
      }
      return JSONstringify({ url: G.location.href, title: document.title, tools, overflow });
    },
    // call runs a tool and resolves with a JSON string (see run), cut to
    // maxBytes characters so a page cannot flood the connection.
    call(name, inputJSON, callId, maxBytes) {
      return run(StringCtor(name), StringCtor(inputJSON), undefined, StringCtor(callId)).then((r) => {
        if (r.ok && r.value !== undefined && r.value.length > maxBytes) {
          r.truncated = r.value.length;
          r.value = r.value.slice(0, maxBytes);
        }
        if (!r.ok && r.error.length > maxBytes) r.error = r.error.slice(0, maxBytes) + ' [cut]';
        return JSONstringify(r);
      });
    },
    // cancel aborts a call in flight.
    cancel(callId, reason) {
      const ctrl = inflight.get(StringCtor(callId));
      if (ctrl) ctrl.abort(new DOMExceptionCtor(StringCtor(reason), 'AbortError'));
    },
  });

  // Hand the bridge to Go. Go accepts the first marked message of each
  // execution context only, and this script runs before the page.
  call(consoleDebug, console, '__webmcp_cdp_bridge__:' + NONCE, bridge);
})();
