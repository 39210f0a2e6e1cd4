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
