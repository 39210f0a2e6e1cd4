package mcpserver

import (
	"context"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The W3C trace context a client sends in a request's _meta (the MCP
// proposal for trace context propagation, SEP-414: the keys traceparent
// and tracestate, as in the HTTP headers). Options.TraceContext turns it
// into the context of the call; without it the keys are not read.
const (
	metaTraceparent = "traceparent"
	metaTracestate  = "tracestate"
)

// maxTraceMeta bounds what is read of each key: a traceparent is 55
// characters, and the W3C limit of a tracestate is 512.
const maxTraceMeta = 1024

// traceContext hands the trace context of meta to Options.TraceContext.
func (s *Server) traceContext(ctx context.Context, meta mcp.Meta) context.Context {
	tc := s.opts.TraceContext
	if tc == nil || meta == nil {
		return ctx
	}
	tp, _ := meta[metaTraceparent].(string)
	if tp == "" || len(tp) > maxTraceMeta {
		return ctx
	}
	ts, _ := meta[metaTracestate].(string)
	if len(ts) > maxTraceMeta {
		ts = ""
	}
	return tc(ctx, tp, ts)
}

// traceContextRaw is traceContext for the fast path's undecoded _meta.
func (s *Server) traceContextRaw(ctx context.Context, raw jsontext.Value) context.Context {
	tc := s.opts.TraceContext
	if tc == nil || raw == nil {
		return ctx
	}
	var m struct {
		Traceparent string `json:"traceparent"`
		Tracestate  string `json:"tracestate"`
	}
	if jsonv2.Unmarshal(raw, &m) != nil || m.Traceparent == "" || len(m.Traceparent) > maxTraceMeta {
		return ctx
	}
	if len(m.Tracestate) > maxTraceMeta {
		m.Tracestate = ""
	}
	return tc(ctx, m.Traceparent, m.Tracestate)
}

// Sessions counts the MCP sessions open now (stdio, and HTTP clients
// before 2026-07-28; a 2026-07-28 request's session lasts the request).
func (s *Server) Sessions() int {
	n := 0
	for range s.mcp.Sessions() {
		n++
	}
	return n
}
