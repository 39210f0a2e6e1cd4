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
    checkPolicy('provideContext', () => {
      const d = isObject(options) ? getOwnPropertyDescriptor(options, 'tools') : undefined;
      const out = [];
      if (!d || !isArray(d.value)) return out;
      for (let i = 0; i < d.value.length && i < MAX_DENIED; i++) {
        const e = getOwnPropertyDescriptor(d.value, i);
        ArrayPush(out, e && 'value' in e ? ownName(e.value) : '*');
      }
      return out;
    });
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
    checkPolicy('registerTool', () => [ownName(tool)]);
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
