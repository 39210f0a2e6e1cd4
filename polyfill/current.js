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
        return gate(() => this.#register(t, o), t.name); // the Permissions Policy first
      } catch (err) {
        return PromiseReject(err);
      }
    }

    // The rest of registerTool, once the document may use tools.
    #register(t, o) {
      try {
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
        return gate(() => this.#getTools(o));
      } catch (err) {
        return PromiseReject(err);
      }
    }

    #getTools(o) {
      try {
        if (!this.#active || !active()) throw domError('InvalidStateError', 'getTools: the document is not active');
        const fromOrigins = o.fromOrigins || [];
        for (let i = 0; i < fromOrigins.length; i++) {
          const s = fromOrigins[i];
          if (trustworthyOrigin(s) === null) throw domError('SecurityError', `getTools: "${s}" is not a potentially trustworthy origin`);
        }
        return new PromiseCtor((resolve) => whenRemote(fromOrigins, () => queueTask(() => {
          const tools = [];
          forEachPeer((p, w) => {
            if (tools.length >= 10000) return;
            const list = p.list(ORIGIN); // (an array of p's realm)
            for (let i = 0; i < list.length; i++) ArrayPush(tools, registeredTool(list[i], w, p.origin));
          });
          // Tools other origins exposed to this one (relayed by Go).
          forEachRemote(fromOrigins, (d, w, origin) => {
            if (tools.length < 10000) ArrayPush(tools, registeredTool(d, w, origin));
          });
          ArraySort(tools, (a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
          resolve(tools);
        })));
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
        return gate(() => this.#executeTool(t, input, o));
      } catch (err) {
        return PromiseReject(err);
      }
    }

    #executeTool(t, input, o) {
      try {
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
      // (WebIDL names the accessor functions "get ontoolchange" and
      // "set ontoolchange"; the names are set below.)
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
  for (const type of ['toolchange', 'toolactivated', 'toolcancel']) { // (before the page)
    const d = getOwnPropertyDescriptor(ModelContext.prototype, 'on' + type);
    defineProperty(d.get, 'name', { value: `get on${type}` });
    defineProperty(d.set, 'name', { value: `set on${type}` });
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
        const finish = (r) => {
          if (settled) return;
          if (!r.ok) return fail(StringCtor(r.error));
          settled = true;
          if (r.kind === 'navigated') resolve(null);
          else if (r.kind === 'undefined') resolve('undefined');
          else resolve(StringCtor(r.value));
          return undefined;
        };
        const p = peerOf(t.window);
        if (!p) {
          // A document of another origin: through Go, if it exposed the
          // tool to this origin (exposure.js).
          const key = remoteKey(t.window, expected, t.name);
          if (key === null) return fail('executeTool: the tool lives in a document of another origin that does not expose it to this one');
          const cancel = runRemote(key, expected, t.name, inputJSON, finish);
          target = { cancel };
          return undefined;
        }
        if (p.origin !== expected) return fail("executeTool: the tool's document is not of tool.origin");
        target = p;
        // The tool's document going away (its frame removed or navigated)
        // ends the call, as in Chromium: it never answers after that.
        const gone = () => fail("executeTool: the tool's document went away during the call");
        tryCall(() => call(addListener, t.window, 'pagehide', gone, { once: true }));
        p.run(t.name, inputJSON, id, (r) => {
          tryCall(() => call(removeListener, t.window, 'pagehide', gone));
          finish(r);
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
