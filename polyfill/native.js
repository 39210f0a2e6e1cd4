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
