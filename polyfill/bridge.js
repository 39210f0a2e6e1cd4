// ---- the bridge Go holds --------------------------------------------------

const goCalls = new SafeMap(); // Go call id -> local id
// (perfNow, of pageserver.js, times a Go call's execution when Go asks:
// timed.)

// runForGo runs a tool like executeTool does (toolactivated, a real
// AbortSignal) and resolves with its completion, whose value (the tool's
// string, or its JSON text) is cut to maxBytes characters so a page cannot
// flood the connection. For Go's own calls (asText) the completion is one
// string, answerText; for calls relayed between documents it is a plain
// object of strings, numbers and booleans ({ok, kind, value, truncated,
// error}) that Go passes on.
function runForGo(name, inputJSON, callId, maxBytes, asText = false, timed = false) {
  syncDoc();
  const t0 = timed ? perfNow() : 0;
  const id = 'go:' + StringCtor(callId);
  goCalls.set(StringCtor(callId), id);
  return new PromiseCtor((resolve) => {
    runLocal(StringCtor(name), StringCtor(inputJSON), id, (r) => {
      goCalls.delete(StringCtor(callId));
      if (asText) {
        // timed: "@MICROSECONDS:" in front, the time execute took here.
        const a = answerText(r, maxBytes);
        resolve(timed ? '@' + StringCtor(MathFloor((perfNow() - t0) * 1000)) + ':' + a : a);
        return;
      }
      // No prototype: resolve() would otherwise look up a then the page
      // may have put on Object.prototype.
      // (kind 'navigated': a form submission that navigates; Go reads the
      // result from the next document, cdp/navresult.go.)
      const out = { __proto__: null, ...r };
      if (out.ok && out.value !== undefined && out.value.length > maxBytes) {
        out.truncated = out.value.length;
        out.value = StringSlice(out.value, 0, maxBytes);
      }
      if (!out.ok && out.error.length > maxBytes) out.error = StringSlice(out.error, 0, maxBytes) + ' [cut]';
      resolve(out);
    });
  });
}

// answerText renders a completion as the one string Go's call reads
// (cdp/invoke.go, parseAnswer): "KIND:VALUE" (KIND is string, json,
// undefined or navigated), "KIND/LENGTH:VALUE" when VALUE was cut from
// LENGTH characters, or "error:MESSAGE". CDP hands a string back cheaper
// than an object by value: about 30 µs a call on Chromium 156.
function answerText(r, maxBytes) {
  if (!r.ok) {
    const e = StringCtor(r.error);
    return 'error:' + (e.length > maxBytes ? StringSlice(e, 0, maxBytes) + ' [cut]' : e);
  }
  const v = r.value === undefined ? '' : r.value;
  if (v.length > maxBytes) return r.kind + '/' + v.length + ':' + StringSlice(v, 0, maxBytes);
  return r.kind + ':' + v;
}

const bridge = freeze({
  // info describes this document.
  info() {
    syncDoc();
    return JSONstringify({ __proto__: null, native: hasNative, url: G.location.href, origin: G.location.origin, title: titleOf(doc), startedBefore });
  },
  // policy hands over Go's verdict on the Permissions Policy "tools" for
  // this document (see policy.js); the first verdict stands.
  policy(allowed) {
    return JSONstringify(setPolicy(allowed === true));
  },
  // list returns the registry as JSON. Tools over the limits are replaced
  // by a refusal, so a page cannot make Go read megabytes per change.
  // (The objects have no prototype and the array an own toJSON of
  // undefined, so a toJSON the page put on Object.prototype or
  // Array.prototype is never called.)
  list(maxTools, maxDescription, maxSchema) {
    syncDoc();
    // This list covers every change so far, unless the verdict is pending
    // (nothing is listed yet: the ping stays, for a read after it).
    if (policy !== 'pending') pingTaken();
    const tools = [];
    defineProperty(tools, 'toJSON', { value: undefined });
    let overflow = 0;
    // A document without the "tools" feature has no tools (and while the
    // verdict is pending, none yet).
    if (policy === 'allowed') registry.forEach((e) => {
      if (tools.length >= maxTools) { overflow++; return; }
      if (e.description.length > maxDescription) {
        ArrayPush(tools, { __proto__: null, name: StringSlice(e.name, 0, 128), refused: `its description is ${e.description.length} characters, over the limit of ${maxDescription}` });
        return;
      }
      if (e.schema !== undefined && e.schema.length > maxSchema) {
        ArrayPush(tools, { __proto__: null, name: StringSlice(e.name, 0, 128), refused: `its inputSchema is ${e.schema.length} characters of JSON, over the limit of ${maxSchema}` });
        return;
      }
      // The outputSchema has the inputSchema's bound (the hub's too).
      if (e.outSchema !== undefined && e.outSchema.length > maxSchema) {
        ArrayPush(tools, { __proto__: null, name: StringSlice(e.name, 0, 128), refused: `its outputSchema is ${e.outSchema.length} characters of JSON, over the limit of ${maxSchema}` });
        return;
      }
      let annotations;
      if (e.annotations || e.hints) annotations = { __proto__: null, ...e.annotations, ...e.hints };
      // script: the userscript that registered it (Go names it).
      ArrayPush(tools, { __proto__: null, name: e.name, title: e.title === null ? '' : e.title, description: e.description, inputSchema: e.schema, outputSchema: e.outSchema, annotations, script: e.script });
    });
    // A denied document lists, instead, the tools it tried to register.
    const denied = policy === 'denied' ? deniedList() : undefined;
    // What it exposes to other origins, and where its window sits, for
    // Go's relay between the documents of the tab (exposure.js).
    const exposed = exposedList(maxTools, maxDescription, maxSchema);
    // bound: this script holds the binding, so every later change pings.
    if (!ping) takeBinding();
    return JSONstringify({ __proto__: null, url: G.location.href, title: titleOf(doc), tools, overflow, denied, exposed, path: selfPath(), bound: ping !== null });
  },
  // call runs a tool for Go (runForGo); it resolves with answerText,
  // after the time execute took when timed.
  call(name, inputJSON, callId, maxBytes, timed) {
    return runForGo(name, inputJSON, callId, maxBytes, true, timed === true);
  },
  // cancel aborts a call in flight: the tool's signal aborts with an
  // AbortError and toolcancel fires.
  cancel(callId, reason) {
    const id = goCalls.get(StringCtor(callId));
    if (id) cancelLocal(id, StringCtor(reason));
  },

  // ---- the relay between documents of other origins (exposure.js) ----
  // remote takes the tools other origins of the tab expose to this one.
  remote(json, changed) {
    return setRemote(StringCtor(json), changed === true);
  },
  // xoTake returns the calls and cancels this document asked Go to relay.
  xoTake(max, maxInput) {
    return xoTake(max, maxInput);
  },
  // xoRun runs a tool for a document of callerOrigin (from CDP) if it is
  // exposed to that origin; it answers like call.
  xoRun(name, inputJSON, callId, maxBytes, callerOrigin) {
    if (!xoAllowed(StringCtor(name), StringCtor(callerOrigin))) {
      return PromiseResolve({ __proto__: null, ok: false, error: `no tool named "${StringCtor(name)}" is exposed to ${StringCtor(callerOrigin)} in this document` });
    }
    return runForGo(name, inputJSON, callId, maxBytes);
  },
  // xoDone settles a relayed call of this document with its completion.
  xoDone(id, json) {
    xoDone(id, json);
  },

  // ---- MCP-B page servers (pageserver.js) ----
  // mcpbTake returns the messages page servers sent since the last take,
  // as JSON: {msgs: [{t: 'ready'|'msg'|'stopped', s, ...}], dropped, more}.
  mcpbTake(maxChars) {
    return mcpbTakeQueue(maxChars);
  },
  // mcpbWait resolves with the same as mcpbTake once messages wait.
  mcpbWait(maxChars) {
    return mcpbWaitQueue(maxChars);
  },
  // mcpbSend posts one client-to-server message (JSON text) to server id;
  // it returns, as JSON, {status: 'ok' | 'gone' | 'bad'}; a request
  // (holdMs > 0) waits up to holdMs for what the servers send next and
  // brings it back too (see mcpbSendHold). timed: a tools/call is timed
  // (mcpbTimed).
  mcpbSend(id, text, maxChars, holdMs, timed) {
    if (holdMs > 0) return mcpbSendHold(id, text, maxChars, holdMs, timed === true);
    return JSONstringify({ __proto__: null, status: mcpbPost(id, text, timed === true) });
  },
});

// Hand the bridge to Go. Go accepts the first marked message of each
// execution context only, and this script runs before the page.
call(consoleDebug, console, '__webmcp_cdp_bridge__:' + NONCE, bridge);
