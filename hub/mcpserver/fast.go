package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file holds the fast path of a stdio session: a tools/call of a page
// tool that cannot ask the client anything is answered here, from the
// line, without the go-sdk's JSON-RPC machinery (which decodes a message
// about seven times, each time with a fresh 32 KiB buffer: ~250 KB of
// garbage and ~0.3 ms per call). Everything else goes to the SDK as
// before. The answer is the bytes the SDK would have written (fast_test.go
// compares the two), and a line the fast path is not sure about in any
// way goes to the SDK, which gives the canonical answer.
//
// A call is answered here when all of these hold (else the SDK answers):
//   - the line parses strictly (exact member names, no duplicates, no
//     member beyond jsonrpc, id, method, params; params has only _meta,
//     name and arguments), jsonrpc is "2.0", method is "tools/call";
//   - its id is an integer of at most 15 digits or a string of printable
//     ASCII without quote or backslash (both echo back byte for byte);
//   - the name is a page tool of the current snapshot;
//   - the session is initialized (the SDK has set its InitializeParams),
//     its client cannot elicit nor declared the Tasks extension, --confirm
//     is none, and the call asks no progress (as Server.callHandler's
//     callNow);
//   - its _meta is absent, or carries no protocol version and no progress
//     token (a legacy request), or is byte for byte one that the SDK has
//     already accepted in a request of this session with protocol version
//     2026-07-28 (the per-request _meta of a stateless client, which the
//     go-sdk client sends unchanged on every request), and in neither case
//     names the Tasks extension.
//
// notifications/cancelled for a call in flight here cancels it, and goes on
// to the SDK too (for which it names no request).

// fastCalls is the fast path of one stdio connection.
type fastCalls struct {
	srv  *Server
	conn *stdioConn
	id   string // the connection's session id, to find its ServerSession

	ctx    context.Context // ends when the connection closes
	cancel context.CancelFunc

	ss atomic.Pointer[mcp.ServerSession]

	mu       sync.Mutex
	inflight map[string]context.CancelFunc // fast calls by canonical id
	pending  map[string]string             // SDK calls with a new-protocol _meta: id -> _meta
	good     map[string]bool               // _meta values the SDK accepted
}

// serverName is the name the server gives the SDK (New), which a
// 2026-07-28 result carries in its _meta.
const serverName = "webmcp-cdp"

// Bounds of the fast path's bookkeeping of _meta values.
const (
	maxPendingMeta = 64
	maxGoodMeta    = 16
)

func newFastCalls(srv *Server, conn *stdioConn, id string) *fastCalls {
	ctx, cancel := context.WithCancel(context.Background())
	return &fastCalls{srv: srv, conn: conn, id: id, ctx: ctx, cancel: cancel,
		inflight: make(map[string]context.CancelFunc), pending: make(map[string]string), good: make(map[string]bool)}
}

// session returns the connection's ServerSession, once the SDK has it.
func (f *fastCalls) session() *mcp.ServerSession {
	if ss := f.ss.Load(); ss != nil {
		return ss
	}
	for ss := range f.srv.mcp.Sessions() {
		if ss.ID() == f.id {
			f.ss.Store(ss)
			return ss
		}
	}
	return nil
}

// fastLine is a JSON-RPC message as the fast path reads it.
type fastLine struct {
	JSONRPC string         `json:"jsonrpc"`
	ID      jsontext.Value `json:"id"`
	Method  string         `json:"method"`
	Params  jsontext.Value `json:"params"`
}

type fastCallParams struct {
	Meta      jsontext.Value `json:"_meta"`
	Name      string         `json:"name"`
	Arguments jsontext.Value `json:"arguments"`
}

type fastCancelParams struct {
	RequestID jsontext.Value `json:"requestId"`
}

var strict = jsonv2.RejectUnknownMembers(true)

// try reads line and returns the call to run when the fast path takes it
// (nil when not: the line goes to the SDK). The call must be run, once.
func (f *fastCalls) try(line []byte) func() {
	if f == nil || f.srv.opts.ClientHints { // the SDK's path reads the hints
		return nil
	}
	call := bytes.Contains(line, []byte(`"tools/call"`))
	if !call && !bytes.Contains(line, []byte(`"notifications/cancelled"`)) {
		return nil
	}
	var m fastLine
	if jsonv2.Unmarshal(line, &m, strict) != nil || m.JSONRPC != "2.0" {
		return nil
	}
	switch {
	case m.Method == "notifications/cancelled" && m.ID == nil:
		var p fastCancelParams
		if jsonv2.Unmarshal(m.Params, &p) == nil {
			if id, ok := canonicalID(p.RequestID); ok {
				f.mu.Lock()
				cancel := f.inflight[id]
				f.mu.Unlock()
				if cancel != nil {
					cancel()
				}
			}
		}
		return nil
	case m.Method != "tools/call":
		return nil
	}
	id, ok := canonicalID(m.ID)
	if !ok {
		return nil
	}
	var p fastCallParams
	if jsonv2.Unmarshal(m.Params, &p, strict) != nil {
		return nil
	}
	newProtocol, ok := f.metaKind(p.Meta)
	if !ok {
		return nil
	}
	ss := f.session()
	if ss == nil {
		return nil
	}
	ip := ss.InitializeParams()
	if ip == nil || f.srv.opts.Confirm != ConfirmNone || canAsk(ss) || declaresTasks(clientCaps(ss)) || !f.srv.tools.Has(p.Name) || f.srv.pageServerTool(p.Name) || p.Name == dispatchName {
		return nil
	}
	ctx, cancel := context.WithCancel(f.srv.traceContextRaw(f.ctx, p.Meta))
	f.mu.Lock()
	if _, dup := f.inflight[id]; dup {
		f.mu.Unlock()
		cancel()
		return nil
	}
	f.inflight[id] = cancel
	f.mu.Unlock()
	// As the SDK's handleMultiRoundTripResult: resultType follows the
	// session's protocol version, not the request's.
	complete := ip.ProtocolVersion >= protocol20260728
	return func() { f.run(ctx, cancel, id, m.ID, p.Name, json.RawMessage(p.Arguments), complete, newProtocol) }
}

// run makes one fast call and writes its answer.
func (f *fastCalls) run(ctx context.Context, cancel context.CancelFunc, id string, rawID jsontext.Value, name string, args json.RawMessage, complete, serverInfo bool) {
	defer func() {
		f.mu.Lock()
		delete(f.inflight, id)
		f.mu.Unlock()
		cancel()
	}()
	res, err := f.srv.callNow(ctx, name, args)
	var out []byte
	if err != nil {
		out = errorLine(rawID, err)
	} else {
		out = f.resultLine(rawID, res, complete, serverInfo)
	}
	if out != nil {
		f.conn.writeLine(out)
	}
}

// resultLine renders a call's result as the SDK does: the result (with
// resultType "complete" in a 2026-07-28 session, and the server's
// identity in _meta for a 2026-07-28 request) in a JSON-RPC response.
func (f *fastCalls) resultLine(rawID jsontext.Value, res *mcp.CallToolResult, complete, serverInfo bool) []byte {
	body := f.srv.texts.render(res, serverInfo, f.srv.opts.Version) // one text block (fast_result.go)
	if body == nil {
		if res.Content == nil {
			res.Content = []mcp.Content{}
		}
		if serverInfo {
			if res.Meta == nil {
				res.Meta = mcp.Meta{}
			}
			if _, ok := res.Meta[mcp.MetaKeyServerInfo]; !ok {
				// As the SDK's annotateServerInfo: the server's Implementation
				// (New gives the SDK the same).
				res.Meta[mcp.MetaKeyServerInfo] = &mcp.Implementation{Name: serverName, Version: f.srv.opts.Version}
			}
		}
		var err error
		if body, err = json.Marshal(res); err != nil {
			return errorLine(rawID, err)
		}
	}
	b := make([]byte, 0, len(body)+len(rawID)+64)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, rawID...)
	b = append(b, `,"result":`...)
	if complete {
		b = append(b, body[:len(body)-1]...)
		b = append(b, `,"resultType":"complete"}`...)
	} else {
		b = append(b, body...)
	}
	return append(b, "}\n"...)
}

// errorLine renders a handler's error as the SDK does (its jsonrpc2
// toWireError and EncodeMessage).
func errorLine(rawID jsontext.Value, err error) []byte {
	we, ok := err.(*jsonrpc.Error)
	if !ok {
		we = &jsonrpc.Error{Message: err.Error()}
		if wrapped, ok := errors.AsType[*jsonrpc.Error](err); ok {
			we.Code = wrapped.Code
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *jsonrpc.Error  `json:"error"`
	}{"2.0", json.RawMessage(rawID), we})
	return buf.Bytes()
}

// metaKind reads a call's _meta: a legacy request (no _meta, or one with no
// protocol version and no progress token), or a 2026-07-28 request whose
// _meta the SDK has accepted before. ok is false for any other.
func (f *fastCalls) metaKind(meta jsontext.Value) (newProtocol, ok bool) {
	if meta == nil {
		return false, true
	}
	if bytes.Contains(meta, []byte(TasksExtension)) {
		return false, false // the call may become a task (tasks.go)
	}
	f.mu.Lock()
	good := f.good[string(meta)]
	f.mu.Unlock()
	if good {
		return true, true // the common case, known without decoding
	}
	var m map[string]jsontext.Value
	if jsonv2.Unmarshal(meta, &m) != nil {
		return false, false
	}
	if _, ok := m["progressToken"]; ok {
		return false, false
	}
	if _, ok := m[mcp.MetaKeyProtocolVersion]; !ok {
		return false, true
	}
	// A 2026-07-28 _meta the SDK has not accepted yet.
	return false, false
}

// notePending remembers a new-protocol _meta that goes to the SDK, so that
// the SDK's successful answer makes it good (sawAnswer).
func (f *fastCalls) notePending(id string, meta jsontext.Value) {
	// Only a _meta whose protocol version is exactly 2026-07-28: the
	// SDK treats an older one as a legacy request.
	var m map[string]jsontext.Value
	if jsonv2.Unmarshal(meta, &m) != nil || string(m[mcp.MetaKeyProtocolVersion]) != `"`+protocol20260728+`"` {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.pending) < maxPendingMeta && len(f.good) < maxGoodMeta {
		f.pending[id] = string(meta)
	}
}

// noteRequest is notePending for every call that goes to the SDK.
func (f *fastCalls) noteRequest(msg jsonrpc.Message) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || !req.IsCall() || !bytes.Contains(req.Params, []byte(mcp.MetaKeyProtocolVersion)) {
		return
	}
	f.mu.Lock()
	full := len(f.good) >= maxGoodMeta
	f.mu.Unlock()
	if full {
		return
	}
	id, ok := idKey(req.ID)
	if !ok {
		return
	}
	var p struct {
		Meta jsontext.Value `json:"_meta"`
	}
	if jsonv2.Unmarshal(req.Params, &p) == nil && p.Meta != nil {
		f.notePending(id, p.Meta)
	}
}

// sawAnswer learns from the SDK's answers which _meta values it accepts.
func (f *fastCalls) sawAnswer(msg jsonrpc.Message) {
	resp, ok := msg.(*jsonrpc.Response)
	if !ok {
		return
	}
	id, ok := idKey(resp.ID)
	if !ok {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	meta, ok := f.pending[id]
	if !ok {
		return
	}
	delete(f.pending, id)
	if resp.Error == nil && len(f.good) < maxGoodMeta {
		f.good[meta] = true
	}
}

// close cancels the fast calls in flight.
func (f *fastCalls) close() { f.cancel() }

// canonicalID returns the key of an id the fast path echoes byte for byte:
// an integer of at most 15 digits without leading zeros, or a string of
// printable ASCII without quote or backslash.
func canonicalID(v jsontext.Value) (string, bool) {
	if len(v) == 0 {
		return "", false
	}
	if v[0] == '"' {
		s := v[1 : len(v)-1]
		for _, c := range s {
			if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
				return "", false
			}
		}
		return "s" + string(s), true
	}
	digits := v
	if digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 15 || (digits[0] == '0' && len(v) > 1) {
		return "", false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return "", false
		}
	}
	return "n" + string(v), true
}

// idKey is canonicalID's key for an id the SDK decoded.
func idKey(id jsonrpc.ID) (string, bool) {
	switch v := id.Raw().(type) {
	case int64:
		return "n" + strconv.FormatInt(v, 10), true
	case string:
		return "s" + v, true
	}
	return "", false
}
