// ---- declarative tools: <form toolname tooldescription> ------------------

// Polyfill only (native Chromium handles its own forms). Each
// <form toolname="…" tooldescription="…" [toolautosubmit]> becomes a tool
// whose schema is synthesized from its controls, as Chromium 156 does:
// text-like inputs and textarea → string (pattern, minLength, maxLength),
// number and range → number (minimum, maximum, multipleOf from step),
// checkbox → boolean, radio group and select → string with enum (and
// anyOf of const/title), select multiple → array of those, date and time
// types → string with a format or pattern; hidden, file, button-like,
// disabled and unnamed controls are left out, and so are names used by
// more than one control (other than a radio group). toolparamdescription,
// or else the control's label, gives a property's description; required
// fills "required". A MutationObserver keeps the tools in step with the
// DOM (coalesced per microtask, bounded per form).
let formsMayRegister = () => {};
let fillForm = () => { throw new Error('declarative tools are not available'); };
let submitForm = () => PromiseReject(new Error('declarative tools are not available'));

if (!hasNative) installCurrent(); // (after the declarations it assigns)

function installForms() {
  const H = G.HTMLFormElement.prototype;
  const qsa = Document.prototype.querySelectorAll;
  const qs = Document.prototype.querySelector;
  const elQuerySelector = Element.prototype.querySelector;
  const matches = Element.prototype.matches;
  const getAttr = Element.prototype.getAttribute;
  const hasAttr = Element.prototype.hasAttribute;
  const setAttr = Element.prototype.setAttribute;
  const removeAttr = Element.prototype.removeAttribute;
  const formElements = getter(H, 'elements');
  const formNoValidate = getter(H, 'noValidate');
  const requestSubmit = H.requestSubmit;
  const nativeSubmit = H.submit;
  const isConnected = getter(Node.prototype, 'isConnected');
  const localName = getter(Element.prototype, 'localName');
  const textContent = getter(Node.prototype, 'textContent');
  const focus = G.HTMLElement.prototype.focus;
  installActiveSelectors(); // selectors.js (after the captures above)
  const I = G.HTMLInputElement.prototype;
  const S = G.HTMLSelectElement.prototype;
  const T = G.HTMLTextAreaElement.prototype;
  const Op = G.HTMLOptionElement.prototype;
  const set = {
    inputValue: setter(I, 'value'), checked: setter(I, 'checked'),
    textareaValue: setter(T, 'value'), selected: setter(Op, 'selected'),
  };
  const get = {
    inputValue: getter(I, 'value'), checked: getter(I, 'checked'), type: getter(I, 'type'),
    textareaValue: getter(T, 'value'), selectOptions: getter(S, 'options'), multiple: getter(S, 'multiple'),
    optionValue: getter(Op, 'value'), optionText: getter(Op, 'text'), selected: getter(Op, 'selected'),
    disabled: (el) => { try { return call(matches, el, ':disabled'); } catch { return true; } },
    labels: (el) => { try { return el.labels; } catch { return null; } },
    validity: (el) => { try { return el.willValidate && !el.validity.valid; } catch { return false; } },
  };

  // form element -> its state {entry, name, description, schema,
  // autosubmit, params: Map(name -> param), exec}.
  const forms = new SafeMap();
  let conflicts = false; // a form waits for a name taken imperatively

  // clean collapses white space to one space and trims, with the original
  // exec and trim (String.prototype.replace would look up the page's
  // Symbol.replace, exec, flags…).
  const SPACES = /\s+/g;
  const clean = (v) => {
    const s = StringCtor(v);
    let out = '';
    let last = 0;
    let m;
    SPACES.lastIndex = 0;
    while ((m = call(RegExpExec, SPACES, s)) !== null) {
      out += StringSlice(s, last, m.index) + ' ';
      last = m.index + m[0].length;
    }
    return StringTrim(out + StringSlice(s, last));
  };
  const num = (s) => (s !== null && StringTrim(s) !== '' && NumberIsFinite(+s) ? +s : undefined);

  function describe(el) {
    const d = call(getAttr, el, 'toolparamdescription');
    if (d !== null) return clean(d);
    const labels = get.labels(el);
    if (labels && labels.length) {
      const text = clean(call(textContent, labels[0]));
      if (text) return text;
    }
    return undefined;
  }

  // synthesize builds the input schema of a form and the map of its
  // parameters (what fillForm needs to set each one).
  function synthesize(form) {
    const properties = {};
    const required = [];
    const params = new SafeMap();
    const counts = new SafeMap();
    const controls = [];
    const all = call(formElements, form);
    for (let i = 0; i < all.length && i < MAX_CONTROLS; i++) ArrayPush(controls, all[i]);
    const named = [];
    for (let i = 0; i < controls.length; i++) {
      const el = controls[i];
      const tag = call(localName, el);
      if (tag !== 'input' && tag !== 'select' && tag !== 'textarea') continue;
      const name = el.name;
      if (!name || get.disabled(el)) continue;
      const type = tag === 'input' ? call(get.type, el) : tag;
      if (type === 'hidden' || type === 'file' || type === 'submit' || type === 'reset' || type === 'button' || type === 'image') continue;
      ArrayPush(named, { el, name, type, tag });
      const kind = type === 'radio' ? 'radio' : 'other';
      const c = counts.get(name) || { radio: 0, other: 0 };
      c[kind]++;
      counts.set(name, c);
    }
    for (let i = 0; i < named.length; i++) {
      const { el, name, type, tag } = named[i];
      const c = counts.get(name);
      if (c.other > 1 || (c.other && c.radio)) continue; // ambiguous
      if (type === 'radio') {
        let p = params.get(name);
        if (!p) {
          p = { kind: 'radio', radios: [] };
          params.set(name, p);
          properties[name] = { type: 'string', anyOf: [], enum: [] };
        }
        const v = call(get.inputValue, el);
        ArrayPush(p.radios, el);
        if (!ArrayIncludes(properties[name].enum, v)) {
          ArrayPush(properties[name].anyOf, { type: 'string', const: v });
          ArrayPush(properties[name].enum, v);
        }
        const desc = describe(el);
        if (desc && properties[name].description === undefined && call(getAttr, el, 'toolparamdescription') !== null) properties[name].description = desc;
        if (el.required && !ArrayIncludes(required, name)) ArrayPush(required, name);
        continue;
      }
      let prop;
      let p;
      if (tag === 'select') {
        const opts = call(get.selectOptions, el);
        const anyOf = [];
        const values = [];
        for (let i = 0; i < opts.length && i < MAX_CONTROLS; i++) {
          const v = call(get.optionValue, opts[i]);
          if (ArrayIncludes(values, v)) continue;
          ArrayPush(values, v);
          ArrayPush(anyOf, { type: 'string', const: v, title: clean(call(get.optionText, opts[i])) });
        }
        const item = { type: 'string', anyOf, enum: values };
        if (call(get.multiple, el)) {
          prop = { type: 'array', items: item, uniqueItems: true };
          p = { kind: 'select-multiple', el };
        } else {
          prop = item;
          p = { kind: 'select', el };
        }
      } else if (type === 'checkbox') {
        prop = { type: 'boolean' };
        p = { kind: 'checkbox', el };
      } else if (type === 'number' || type === 'range') {
        prop = { type: 'number' };
        const min = num(call(getAttr, el, 'min'));
        const max = num(call(getAttr, el, 'max'));
        const stepAttr = call(getAttr, el, 'step');
        if (min !== undefined) prop.minimum = min;
        else if (type === 'range') prop.minimum = 0;
        if (max !== undefined) prop.maximum = max;
        else if (type === 'range') prop.maximum = 100;
        if (stepAttr === null || StringToLowerCase(StringTrim(stepAttr)) !== 'any') {
          const step = num(stepAttr);
          prop.multipleOf = step !== undefined && step > 0 ? step : 1;
        }
        p = { kind: 'value', el };
      } else {
        prop = { type: 'string' };
        const formats = {
          date: { format: 'date' },
          'datetime-local': { pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]+)?)?$' },
          time: { pattern: '^[0-9]{2}:[0-9]{2}(:[0-9]{2}(\\.[0-9]+)?)?$' },
          month: { pattern: '^[0-9]{4}-[0-9]{2}$' },
          week: { pattern: '^[0-9]{4}-W[0-9]{2}$' },
          color: { pattern: '^#[0-9a-fA-F]{6}$' },
          email: { format: 'email' },
          url: { format: 'uri' },
        };
        const f = formats[type];
        if (f) ObjectAssign(prop, f);
        if (tag === 'input' && !f) {
          const pattern = call(getAttr, el, 'pattern');
          if (pattern) prop.pattern = pattern;
        }
        const minLength = num(call(getAttr, el, 'minlength'));
        const maxLength = num(call(getAttr, el, 'maxlength'));
        if (minLength !== undefined && minLength >= 0) prop.minLength = minLength;
        if (maxLength !== undefined && maxLength >= 0) prop.maxLength = maxLength;
        p = { kind: tag === 'textarea' ? 'textarea' : 'value', el };
      }
      const desc = describe(el);
      if (desc) prop.description = desc;
      properties[name] = prop;
      params.set(name, p);
      if (el.required && !ArrayIncludes(required, name)) ArrayPush(required, name);
    }
    params.forEach((p, name) => {
      if (p.kind === 'radio' && properties[name].anyOf.length === 0) delete properties[name];
    });
    return { schema: { type: 'object', properties, required }, params };
  }

  function read(form) {
    const name = call(getAttr, form, 'toolname');
    const description = call(getAttr, form, 'tooldescription');
    if (name === null || !test(NAME_RE, name) || !description) return null;
    const { schema, params } = synthesize(form);
    const title = call(getAttr, form, 'tooltitle'); // the tool's title (null: none)
    return { name, title, description, schema: JSONstringify(schema), params, autosubmit: call(hasAttr, form, 'toolautosubmit') };
  }

  // sync brings the registry in step with the forms of the document.
  function sync() {
    let dirty = false;
    const seen = new SafeSet();
    const found = call(qsa, doc, 'form[toolname]');
    for (let i = 0; i < found.length && i < MAX_FORMS; i++) {
      const form = found[i];
      let next = read(form);
      if (next && policy === 'denied') { // no form is a tool; Go hears it tried
        noteDenied(next.name);
        next = null;
      }
      const old = forms.get(form);
      if (old && next && old.name === next.name && old.description === next.description && old.title === next.title &&
          old.schema === next.schema && old.autosubmit === next.autosubmit && registry.get(old.name) === old.entry) {
        old.params = next.params;
        seen.add(form);
        continue;
      }
      if (old) {
        drop(form, old, 'the form changed during the call');
        dirty = true;
      }
      if (!next) continue;
      if (registry.has(next.name)) {
        conflicts = true; // registered once the name is free again
        continue;
      }
      const state = { ...next, form, exec: null, entry: null };
      state.entry = {
        name: next.name, title: next.title, description: next.description, schema: next.schema,
        annotations: undefined, hints: undefined, exposed: [], face: 'form', execute: undefined, thisArg: undefined, form: state,
      };
      registry.set(next.name, state.entry);
      forms.set(form, state);
      seen.add(form);
      dirty = true;
    }
    forms.forEach((state, form) => {
      if (!seen.has(form)) {
        drop(form, state, 'the form was removed during the call');
        dirty = true;
      }
    });
    watch(found.length > 0 || conflicts);
    if (dirty) changed();
  }

  function drop(form, state, why) {
    forms.delete(form);
    if (registry.get(state.name) === state.entry) registry.delete(state.name);
    // Once the page gave respondWith() its result, the call settles with
    // it whatever happens to the form (as Chromium does): a handler that
    // removes its form after answering is common. A form that goes before
    // it was submitted (waiting for its person) cancels the call: it fails
    // and toolcancel fires, as a reset does (the web-platform-tests expect
    // it; Chromium 156 fires no toolcancel, see the e2e gap list).
    const exec = state.exec;
    if (!exec || exec.responded || exec.done) return;
    if (!exec.event) cancelLocal(exec.id, `Tool execution cancelled: ${why}`, why);
    else exec.fail(why);
  }

  formsMayRegister = () => {
    if (conflicts) {
      conflicts = false;
      queueMicro(sync);
    }
  };

  // Only mutations that can touch a tool form cause a sync. Until the
  // document has a form with a toolname (most documents never do), the
  // observer watches only for one (narrow, below): that costs a document
  // little however large its DOM, where the wide watch below costs a page
  // of a few thousand elements about 10 ms of its load.
  const FORMISH = new SafeSet();
  for (const tag of ['form', 'input', 'select', 'textarea', 'option', 'optgroup', 'fieldset', 'label', 'datalist']) FORMISH.add(tag); // (before the page)
  function relevant(records) {
    for (let i = 0; i < records.length; i++) {
      const r = records[i];
      if (r.type === 'attributes') {
        const tag = call(localName, r.target);
        if (FORMISH.has(tag)) return true;
        continue;
      }
      if (forms.size > 0 && r.removedNodes.length > 0) return true;
      const added = r.addedNodes;
      for (let j = 0; j < added.length; j++) {
        const n = added[j];
        if (n.nodeType !== 1) continue;
        if (FORMISH.has(call(localName, n))) return true;
        if (call(elQuerySelector, n, 'form,input,select,textarea,option')) return true;
      }
    }
    return false;
  }
  // mayAddToolForm says whether records may have brought a form with a
  // toolname (the narrow watch): an attribute record is one of toolname or
  // tooldescription; an added element is such a form or holds one. A
  // large batch (a page being parsed) costs one query of the document
  // instead of a look at each record.
  function mayAddToolForm(records) {
    if (records.length > 64) return call(qs, doc, 'form[toolname]') !== null;
    for (let i = 0; i < records.length; i++) {
      const r = records[i];
      if (r.type === 'attributes') return true;
      const added = r.addedNodes;
      for (let j = 0; j < added.length; j++) {
        const n = added[j];
        if (n.nodeType !== 1) continue;
        if (call(localName, n) === 'form' ? call(hasAttr, n, 'toolname') : call(elQuerySelector, n, 'form[toolname]') !== null) return true;
      }
    }
    return false;
  }
  let syncQueued = false;
  let wide = false; // the document has a form with a toolname: watch all it reads
  const MOobserve = G.MutationObserver.prototype.observe;
  const MOdisconnect = G.MutationObserver.prototype.disconnect;
  const observer = new G.MutationObserver((records) => {
    if (syncQueued || !(wide ? relevant(records) : mayAddToolForm(records))) return;
    syncQueued = true;
    queueMicro(() => { syncQueued = false; sync(); });
  });
  const WIDE = {
    subtree: true, childList: true, attributes: true,
    attributeFilter: ['toolname', 'tooldescription', 'tooltitle', 'toolautosubmit', 'toolparamdescription', 'name', 'type', 'required',
      'disabled', 'value', 'multiple', 'min', 'max', 'step', 'pattern', 'minlength', 'maxlength', 'form', 'for', 'id', 'label'],
  };
  const NARROW = { subtree: true, childList: true, attributes: true, attributeFilter: ['toolname', 'tooldescription'] };
  const observe = () => call(MOobserve, observer, doc, wide ? WIDE : NARROW);
  // watch switches between the watches (observe again replaces the
  // options; records already queued are still delivered).
  function watch(w) {
    if (w === wide) return;
    wide = w;
    observe();
  }
  observe();
  ArrayPush(onNewDocument, () => {
    call(MOdisconnect, observer);
    forms.clear(); // (their registry entries went with the registry)
    conflicts = false;
    observe();
    sync();
  });

  // ---- invoking a form ----------------------------------------------------

  const fire = (el, type) => call(dispatch, el, new EventCtor(type, { bubbles: true, composed: type === 'input' }));
  const changedValue = (el) => { fire(el, 'input'); fire(el, 'change'); };

  // fillForm sets the controls named in input (only those), firing input
  // and change where a value changes. An unknown parameter is an error.
  fillForm = (state, input) => {
    const ks = ObjectKeys(input);
    for (let i = 0; i < ks.length; i++) {
      const key = ks[i];
      if (!state.params.has(key)) throw new Error(`Input contains a parameter "${key}" but there is no such parameter for the tool`);
    }
    state.filled = ks; // (named in the result of a call from Go that a person must submit)
    for (let i = 0; i < ks.length; i++) {
      const key = ks[i];
      const p = state.params.get(key);
      const v = input[key];
      if (p.kind === 'checkbox') {
        const on = v === true || v === 'true' || v === 'on' || v === 1;
        if (call(get.checked, p.el) !== on) { call(set.checked, p.el, on); changedValue(p.el); }
      } else if (p.kind === 'radio') {
        const want = StringCtor(v);
        let radio;
        for (let i = 0; i < p.radios.length && !radio; i++) if (call(get.inputValue, p.radios[i]) === want) radio = p.radios[i];
        if (!radio) throw new Error(`"${want}" is not one of the values of ${key}`);
        if (!call(get.checked, radio)) { call(set.checked, radio, true); changedValue(radio); }
      } else if (p.kind === 'select' || p.kind === 'select-multiple') {
        const given = p.kind === 'select' ? [v] : isArray(v) ? v : [v];
        const wanted = [];
        for (let i = 0; i < given.length; i++) ArrayPush(wanted, StringCtor(given[i]));
        const opts = call(get.selectOptions, p.el);
        let found = 0;
        let touched = false;
        for (let i = 0; i < opts.length; i++) {
          const on = ArrayIncludes(wanted, call(get.optionValue, opts[i])) && (p.kind === 'select-multiple' || found === 0);
          if (on) found++;
          if (call(get.selected, opts[i]) !== on) { call(set.selected, opts[i], on); touched = true; }
        }
        if (p.kind === 'select' && found === 0) throw new Error(`"${wanted[0]}" is not one of the options of ${key}`);
        if (touched) changedValue(p.el);
      } else {
        const s = v === null ? '' : StringCtor(v);
        const isText = p.kind === 'textarea';
        const before = call(isText ? get.textareaValue : get.inputValue, p.el);
        if (before !== s) { call(isText ? set.textareaValue : set.inputValue, p.el, s); changedValue(p.el); }
      }
    }
  };

  // The submit events of agent invocations: event -> exec.
  const agentEvents = new SafeWeakMap();

  // submitForm submits a filled form (toolautosubmit) or waits for the
  // person to submit it, and resolves with the value the page passed to
  // SubmitEvent.respondWith(), or NAVIGATED when the submission navigates.
  submitForm = (entry, run, id) => new PromiseCtor((resolve, reject) => {
    const state = entry.form;
    const form = state.form;
    if (state.exec) return reject(new Error('the form is already being filled by another call'));
    // Chromium matches the form with :tool-form-active and its submit
    // button with :tool-submit-active during the call. A script cannot
    // add pseudo-classes, so the polyfill sets the attributes
    // data-tool-form-active and data-tool-submit-active instead (style
    // both: docs/differences.md).
    let marked = [];
    const mark = (el, attr) => {
      if (!el) return;
      tryCall(() => call(setAttr, el, attr, ''));
      ArrayPush(marked, [el, attr]);
    };
    const exec = {
      id, event: null, responded: null, script: false, done: false,
      finish() {
        exec.done = true;
        if (state.exec === exec) state.exec = null;
        const m = marked;
        marked = [];
        for (let i = 0; i < m.length; i++) tryCall(() => call(removeAttr, m[i][0], m[i][1]));
      },
      ok(v) { if (!exec.done) { exec.finish(); resolve(v); } },
      fail(msg) { if (!exec.done) { exec.finish(); reject(new Error(msg)); } },
    };
    state.exec = exec;
    run.form = exec;
    mark(form, 'data-tool-form-active');
    mark(submitButton(form), 'data-tool-submit-active');
    if (state.autosubmit) {
      if (!call(formNoValidate, form)) {
        const els = call(formElements, form);
        for (let i = 0; i < els.length; i++) {
          const el = els[i];
          if (get.validity(el)) return exec.fail(`Form validation failed: ${el.name || call(localName, el)}: ${el.validationMessage}`);
        }
      }
      try {
        call(requestSubmit, form);
      } catch (e) {
        return exec.fail(errorText(e));
      }
      return settle(state, exec);
    }
    // Without toolautosubmit a person checks the form and submits it:
    // bring its submit button into focus and wait.
    const button = submitButton(form);
    if (!button) return exec.fail('No submit button was found, but for a form without `toolautosubmit`, there must be a submit button');
    tryCall(() => call(focus, button));
    if (StringSlice(id, 0, 3) === 'go:') {
      // An agent over MCP cannot wait for a person who may never come: the
      // call ends here, saying what was filled; the person's submission is
      // then the person's own (not a result of this call).
      const filled = state.filled || [];
      let names = '';
      for (let i = 0; i < filled.length; i++) names += (i ? ', ' : '') + filled[i];
      exec.ok(`The form "${state.name}" was filled${filled.length ? ` (${names})` : ' (no fields)'} but not submitted: it has no toolautosubmit, so a person must check it and submit it.`);
    }
    return undefined;
  });

  // submitButton is the form's first enabled submit button, or null.
  function submitButton(form) {
    const els = call(formElements, form);
    for (let i = 0; i < els.length; i++) {
      const el = els[i];
      const tag = call(localName, el);
      const t = tag === 'input' ? call(get.type, el) : tag === 'button' ? (el.type || 'submit') : '';
      if ((t === 'submit' || t === 'image') && !get.disabled(el)) return el;
    }
    return null;
  }

  // settle decides the outcome once the submit event has been dispatched.
  function settle(state, exec) {
    if (exec.done) return;
    if (exec.responded) {
      then(exec.responded, (v) => exec.ok(v), (e) => exec.fail(`respondWith promise was rejected: ${errorText(e)}`));
      return;
    }
    if (registry.get(state.name) !== state.entry || !call(isConnected, state.form)) {
      exec.fail('the form was removed or changed during the call');
      return;
    }
    if (!exec.event) {
      exec.fail('Form validation failed: the form was not submitted');
      return;
    }
    if (exec.script) {
      exec.ok(NAVIGATED);
      return;
    }
    if (call(eventDefaultPrevented, exec.event)) {
      exec.fail("The page called preventDefault() on the 'submit' event without calling respondWith() with the tool result");
      return;
    }
    exec.ok(NAVIGATED);
  }

  // The first listener of all (capture, at the window) marks the submit
  // events of agent invocations.
  call(addListener, G, 'submit', (ev) => {
    const state = forms.get(call(eventTarget, ev));
    const exec = state && state.exec;
    if (!exec || exec.done || exec.event) return;
    exec.event = ev;
    agentEvents.set(ev, exec);
    // A person's submission: decide after the dispatch, in a later task.
    if (!state.autosubmit) queueTask(() => settle(state, exec));
  }, true);

  // A reset cancels the call: it fails with UnknownError and toolcancel
  // fires (the explainer: the agent is notified of the cancellation).
  // (Chromium 156 fires no toolcancel here; see the e2e gap list.)
  call(addListener, G, 'reset', (ev) => {
    const state = forms.get(call(eventTarget, ev));
    const exec = state && state.exec;
    if (exec && !exec.done) cancelLocal(exec.id, 'Tool execution cancelled by a form reset', 'Tool execution cancelled by a form reset');
  }, true);

  // form.submit() called by the page during an invocation (it fires no
  // submit event) counts as a navigating submission.
  defineProperty(H, 'submit', {
    configurable: true, enumerable: true, writable: true,
    value: { submit() {
      const state = forms.get(this);
      const exec = state && state.exec;
      if (exec && !exec.done) {
        exec.script = true;
        if (!exec.event) exec.ok(NAVIGATED);
      }
      return call(nativeSubmit, this);
    } }.submit,
  });

  // SubmitEvent.agentInvoked and respondWith() (declarative explainer).
  const SE = G.SubmitEvent.prototype;
  const submitter = getter(SE, 'submitter');
  const brand = (ev) => { call(submitter, ev); }; // throws TypeError for non-SubmitEvents
  defineProperties(SE, {
    agentInvoked: {
      configurable: true, enumerable: true,
      get: getOwnPropertyDescriptor({ get agentInvoked() { brand(this); return agentEvents.has(this); } }, 'agentInvoked').get,
    },
    respondWith: {
      configurable: true, enumerable: true, writable: true,
      value: { respondWith(agentResponse) {
        brand(this);
        const exec = agentEvents.get(this);
        if (!exec) throw domError('InvalidStateError', "Failed to execute 'respondWith' on 'SubmitEvent': the submission was not invoked by an agent.");
        if (call(eventPhase, this) === 0) throw domError('InvalidStateError', "Failed to execute 'respondWith' on 'SubmitEvent': the event is no longer being dispatched.");
        if (!call(eventDefaultPrevented, this)) throw domError('InvalidStateError', "Failed to execute 'respondWith' on 'SubmitEvent': To call respondWith, you must first call preventDefault.");
        if (exec.responded) throw domError('InvalidStateError', "Failed to execute 'respondWith' on 'SubmitEvent': respondWith was already called.");
        // WebIDL turns the argument into a promise of the browser's that
        // follows the page's, and the browser reacts to it at once: a
        // rejection is the call's outcome, never an unhandled rejection in
        // the page, even when the call ended before settle() reads it (a
        // reset or an abort during the submit event, a cancellation).
        const responded = PromiseResolve(agentResponse);
        then(responded, undefined, () => {});
        exec.responded = responded;
      } }.respondWith,
    },
  });

  sync();
}
