package mcpserver

import (
	"encoding/json"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// This file is the fast path of MCP 2026-07-28 over HTTP, as fast.go is
// stdio's: the go-sdk's stateless handler decodes a request's body about
// thirteen times, each with a fresh 32 KiB buffer, and a tools/call of a
// page tool spends more time there than in the page (decision
// 2026-11-28-stateless-http-floor). A call that cannot ask its client
// anything is answered here, as one application/json response whose result
// is the one the SDK would give; any request this path is not sure about
// goes to the SDK, which gives the canonical answer (fast_http_test.go
// compares the two). A call is answered here when all of these hold:
//   - POST with MCP-Protocol-Version 2026-07-28, Mcp-Method tools/call,
//     Content-Type application/json, and an Accept the SDK takes;
//   - the body parses strictly (as stdio's fast path reads a line), with a
//     canonical id, and its name is Mcp-Name;
//   - its _meta holds exactly the protocol version 2026-07-28, the client's
//     capabilities (neither elicitation nor sampling: nothing to ask; not
//     the Tasks extension: the call may become a task) and
//     maybe its clientInfo: no progress token, log level or other key;
//   - the tool is a page tool of the current snapshot, not a page server's,
//     with no x-mcp-header annotation, and --confirm is none.

// maxFastMeta bounds the _meta values whose check is remembered.
const maxFastMeta = 64

// fastHTTP is the fast path's state: the _meta values checked before.
type fastHTTP struct {
	srv  *Server
	line fastCalls // its result rendering (resultLine)

	mu   sync.Mutex
	meta map[string]fastMeta
}

// fastMeta is what a checked _meta says: whether the fast path may take
// the call, and the client it names.
type fastMeta struct {
	ok     bool
	client recentKey
}

// fastHTTPHandler wraps the stateless handler next with the fast path.
func (s *Server) fastHTTPHandler(next http.Handler, maxBody int64) http.Handler {
	f := &fastHTTP{srv: s, line: fastCalls{srv: s}, meta: make(map[string]fastMeta)}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !f.serve(w, r, maxBody) {
			next.ServeHTTP(w, r)
		}
	})
}

// serve answers r when the fast path takes it, and says whether it did.
func (f *fastHTTP) serve(w http.ResponseWriter, r *http.Request, maxBody int64) bool {
	h := r.Header
	if r.Method != http.MethodPost || h.Get(headerMethod) != "tools/call" || h.Get(headerProtocolVersion) != protocol20260728 ||
		f.srv.opts.Confirm != ConfirmNone || f.srv.opts.ClientHints || !contentJSON(h.Get("Content-Type")) || !acceptsBoth(h.Values("Accept")) {
		return false
	}
	body, err := peekBody(w, r, maxBody)
	if err != nil {
		return false
	}
	var m fastLine
	if jsonv2.Unmarshal(body, &m, strict) != nil || m.JSONRPC != "2.0" || m.Method != "tools/call" {
		return false
	}
	if _, ok := canonicalID(m.ID); !ok {
		return false
	}
	var p fastCallParams
	if jsonv2.Unmarshal(m.Params, &p, strict) != nil || p.Name != h.Get(headerName) {
		return false
	}
	meta, ok := f.checkMeta(p.Meta)
	if !ok || !f.srv.tools.Has(p.Name) || p.Name == dispatchName {
		return false
	}
	rt, ok := f.srv.hub.Tool(p.Name)
	if !ok || rt.Source.Backend == core.BackendMCPB {
		return false
	}
	if b, _ := hub.ParamHeaders(rt.Tool.InputSchema); len(b) > 0 {
		return false // paramHeaderCheck, then the SDK
	}
	f.srv.recent.add(meta.client, time.Now())
	ctx := r.Context()
	if ti := auth.TokenInfoFromContext(ctx); ti != nil {
		if who := callerOf(&mcp.RequestExtra{TokenInfo: ti}); who != "" {
			ctx = hub.WithCaller(ctx, who)
		}
	}
	res, err := f.srv.callNow(ctx, p.Name, json.RawMessage(p.Arguments))
	var out []byte
	if err != nil {
		out = errorLine(m.ID, err)
	} else {
		out = f.line.resultLine(m.ID, res, true, true)
	}
	wh := w.Header()
	wh.Set("Content-Type", "application/json")
	wh.Set("Content-Length", strconv.Itoa(len(out)))
	w.WriteHeader(http.StatusOK)
	w.Write(out)
	return true
}

// checkMeta reads a call's _meta, once per distinct value (bounded).
func (f *fastHTTP) checkMeta(raw jsontext.Value) (fastMeta, bool) {
	if raw == nil {
		return fastMeta{}, false
	}
	f.mu.Lock()
	m, known := f.meta[string(raw)]
	f.mu.Unlock()
	if known {
		return m, m.ok
	}
	m = readFastMeta(raw)
	f.mu.Lock()
	if len(f.meta) >= maxFastMeta {
		clear(f.meta) // a client that makes up values only costs itself checks
	}
	f.meta[string(raw)] = m
	f.mu.Unlock()
	return m, m.ok
}

// readFastMeta checks a _meta as the SDK's validateRequestMeta does, for
// the values the fast path takes: the version exactly 2026-07-28,
// capabilities that decode (into the SDK's type), ask for nothing and do
// not declare the Tasks extension, a
// clientInfo that decodes when present, and no other key.
func readFastMeta(raw jsontext.Value) fastMeta {
	var m struct {
		Version string         `json:"io.modelcontextprotocol/protocolVersion"`
		Caps    jsontext.Value `json:"io.modelcontextprotocol/clientCapabilities"`
		Info    jsontext.Value `json:"io.modelcontextprotocol/clientInfo"`
	}
	if jsonv2.Unmarshal(raw, &m, strict) != nil || m.Version != protocol20260728 || m.Caps == nil {
		return fastMeta{}
	}
	var caps mcp.ClientCapabilities
	if json.Unmarshal(m.Caps, &caps) != nil || canAskWith(&caps) || declaresTasks(&caps) {
		return fastMeta{}
	}
	client := recentKey{name: "unknown"}
	if m.Info != nil {
		var info mcp.Implementation
		if json.Unmarshal(m.Info, &info) != nil {
			return fastMeta{}
		}
		client = recentKey{name: cut(info.Name, 100), version: cut(info.Version, 40)}
	}
	return fastMeta{ok: true, client: client}
}

// contentJSON says whether a Content-Type is JSON, as the SDK reads it.
func contentJSON(v string) bool {
	mt, _, err := mime.ParseMediaType(v)
	return err == nil && mt == "application/json"
}

// acceptsBoth says whether Accept takes JSON and an event stream, as the
// SDK asks of a POST.
func acceptsBoth(values []string) bool {
	var j, s bool
	for _, v := range values {
		for t := range strings.SplitSeq(v, ",") {
			base, _, _ := strings.Cut(t, ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				j = true
			case "text/event-stream", "text/*":
				s = true
			case "*/*":
				j, s = true, true
			}
		}
	}
	return j && s
}
