// ---- a WebMCP polyfill of the page's own, installed before this script ----
//
// In attach mode this script also runs in documents that loaded before we
// attached (Page.addScriptToEvaluateOnNewDocument with runImmediately). A
// page built on a polyfill of its own has registered its tools there
// already, out of our registry's sight. So its API is read through the
// page API it exposes to any script, and each of its tools is mirrored
// into our registry with an execute that calls back into it: Go lists and
// calls them as if we had been first. New tools the page registers later
// arrive the same way (its toolchange event, or its register methods).
//
// What we rely on, read in the pinned packages (e2e/js/node_modules):
//   - @mcp-b/global 5.1.0 (src/global.ts) replaces document.modelContext
//     and navigator.modelContext with own, configurable data properties
//     holding a BrowserMcpServer (@mcp-b/webmcp-ts-sdk), and installs
//     navigator.modelContextTesting by default;
//   - @mcp-b/webmcp-polyfill 5.1.0 puts a getter on Document.prototype
//     (which current.js has replaced by now) and an own getter on
//     navigator (modelContext; modelContextTesting with installTestingShim);
//   - both objects are EventTargets with the W3C draft's getTools() (a
//     promise of RegisteredTool {name, title, description, inputSchema
//     object, annotations, origin, window}) and executeTool(tool,
//     inputJSON, {signal}) (a promise of the result serialized as
//     Chromium's ModelContextTesting does: JSON for objects, else String),
//     and fire "toolchange" after every change;
//   - the testing shim (Chromium's ModelContextTesting shape) has listTools()
//     ([{name, description, inputSchema JSON string}]) and
//     executeTool(name, inputJSON, {signal}), and fires "toolchange";
//   - older navigator.modelContext shims (MCP-B before the draft moved to
//     document) offer listTools() and executeTool(name, input) without
//     events: their register methods are wrapped to read again.
// With native WebMCP none of this runs: those polyfills then keep their
// tools in the native registry, which WebMCP.enable replays to Go.

const MAX_FOREIGN = 256; // tools read from a page's own API
const FOREIGN_METHODS = ['registerTool', 'unregisterTool', 'provideContext', 'clearContext'];

// ownValue reads an own property of o without running the page's code
// where it can be helped (a data property), else through its getter.
function ownValue(o, k) {
  const d = tryCall(() => getOwnPropertyDescriptor(o, k));
  if (!d) return undefined;
  if (hasOwn(d, 'value')) return d.value;
  return typeof d.get === 'function' ? tryCall(() => call(d.get, o)) : undefined;
}

// foreignAPI finds the page's own WebMCP object, if any, and how to read
// it: "draft" (getTools/executeTool) wins over "list" (listTools and
// executeTool by name). Only one object is read, so one registry is never
// listed twice (@mcp-b/global's testing shim shows the same tools).
function foreignAPI() {
  const nav = G.navigator;
  const seen = [
    ownValue(doc, 'modelContext'),
    ownValue(nav, 'modelContextTesting'),
    ownValue(nav, 'modelContext'),
  ];
  let list = null;
  for (let i = 0; i < seen.length; i++) {
    const o = seen[i];
    if (!isObject(o) || o === current || o === legacy) continue;
    const has = (m) => typeof tryCall(() => o[m]) === 'function';
    if (has('getTools') && has('executeTool')) return { api: o, kind: 'draft' };
    if (!list && has('listTools') && has('executeTool')) list = { api: o, kind: 'list' };
  }
  return list;
}

// decodeResult turns a serialized result back into the value the tool
// returned, so Go sees what it would see had we been first (an object as
// JSON, a string verbatim).
function decodeResult(v) {
  if (typeof v !== 'string') return v;
  try {
    const parsed = JSONparse(v);
    if (isObject(parsed)) return parsed;
  } catch { /* a plain string */ }
  return v;
}

function adoptPreexisting() {
  if (hasNative) return;
  const found = foreignAPI();
  if (!found) return;
  const { api, kind } = found;
  const home = doc;
  const getTools = tryCall(() => api.getTools);
  const listTools = tryCall(() => api.listTools);
  const executeTool = tryCall(() => api.executeTool);
  // The testing shape takes the input as JSON text; older shims an object.
  const byJSON = api === ownValue(G.navigator, 'modelContextTesting');

  // A tool definition for our registry that runs the page's tool through
  // its own executeTool.
  const definition = (item) => {
    const name = item.name;
    let inputSchema = item.inputSchema;
    if (typeof inputSchema === 'string') inputSchema = tryCall(JSONparse, inputSchema);
    const def = {
      name, description: item.description, inputSchema: isObject(inputSchema) ? inputSchema : undefined,
      annotations: isObject(item.annotations) ? item.annotations : undefined,
      execute(input, options) {
        const signal = options && options.signal;
        const json = JSONstringify(input);
        let args;
        if (kind === 'draft') args = [item, json, { signal }];
        else if (byJSON || typeof item.inputSchema === 'string') args = [name, json, { signal }];
        else args = [name, input]; // an older shim takes the input object
        return then(PromiseResolve(ReflectApply(executeTool, api, args)), decodeResult);
      },
    };
    if (typeof item.title === 'string' && item.title !== '') def.title = item.title;
    return def;
  };

  const apply = (items) => {
    if (doc !== home) return; // the window shows another document now
    const names = new SafeSet();
    let count = 0;
    const n = isArray(items) ? items.length : 0;
    for (let i = 0; i < n && count < MAX_FOREIGN; i++) {
      let c;
      try {
        const item = items[i];
        if (!isObject(item)) continue;
        const def = definition(item);
        c = convertTool(def, 'the page\'s own WebMCP tool');
        // A tool the page registered with us since wins over its copy.
        const taken = (x) => registry.has(x) && registry.get(x).face !== 'foreign';
        const schema = checkTool(c, 'the page\'s own WebMCP tool', taken);
        names.add(c.name);
        count++;
        registry.set(c.name, makeEntry(c, schema, 'foreign', def));
      } catch { /* not a tool we can offer; the page's own API still has it */ }
    }
    const gone = [];
    registry.forEach((e, name) => { if (e.face === 'foreign' && !names.has(name)) ArrayPush(gone, name); });
    for (let i = 0; i < gone.length; i++) registry.delete(gone[i]);
    changed();
  };

  // One read at a time; a change during a read asks for one more.
  let reading = false;
  let again = false;
  const sync = () => {
    if (reading) { again = true; return; }
    reading = true;
    let p;
    try {
      p = PromiseResolve(kind === 'draft' ? ReflectApply(getTools, api, []) : ReflectApply(listTools, api, []));
    } catch (e) {
      p = PromiseReject(e);
    }
    const done = () => {
      reading = false;
      if (again && doc === home) { again = false; sync(); }
    };
    then(p, (items) => { tryCall(apply, items); done(); }, done);
  };

  let events = false;
  try {
    call(addListener, api, 'toolchange', sync);
    events = true;
  } catch { /* not an EventTarget */ }
  if (!events && isExtensible(api)) {
    for (let i = 0; i < FOREIGN_METHODS.length; i++) {
      const m = FOREIGN_METHODS[i];
      const orig = tryCall(() => api[m]);
      if (typeof orig !== 'function') continue;
      const wrapped = { [m](...args) {
        const r = ReflectApply(orig, this, args);
        queueMicro(sync);
        return r;
      } }[m];
      tryCall(() => defineProperty(api, m, { value: wrapped, writable: true, configurable: true, enumerable: false }));
    }
  }
  sync();
}
adoptPreexisting();
