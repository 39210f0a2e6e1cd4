package mcpserver

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

type traceKey struct{}

// ctxBrowser reports what Options.TraceContext put in each call's context.
type ctxBrowser chan string

func (b ctxBrowser) Invoke(ctx context.Context, _, _ string, _ json.RawMessage) (core.Result, error) {
	v, _ := ctx.Value(traceKey{}).(string)
	b <- v
	return core.Result{Kind: core.KindString, Value: "ok"}, nil
}

// TestTraceContextFromMeta: the traceparent and tracestate of a
// tools/call's _meta reach Options.TraceContext, and the context it returns
// is the call's, on the stdio fast path and through the SDK alike; an
// oversized value is not read.
func TestTraceContextFromMeta(t *testing.T) {
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	call := func(id, meta string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{` + meta + `"name":"s_test_t","arguments":{}}}`
	}
	tests := []struct {
		name, meta, want string
	}{
		{"both", `"_meta":{"traceparent":"` + tp + `","tracestate":"a=b"},`, tp + "|a=b"},
		{"traceparent only", `"_meta":{"traceparent":"` + tp + `"},`, tp + "|"},
		{"none", ``, ""},
		{"other keys", `"_meta":{"trace":"x"},`, ""},
		{"oversized", `"_meta":{"traceparent":"` + strings.Repeat("0", 2000) + `"},`, ""},
		{"oversized tracestate", `"_meta":{"traceparent":"` + tp + `","tracestate":"` + strings.Repeat("a", 2000) + `"},`, tp + "|"},
	}
	for _, fast := range []bool{true, false} {
		b := make(ctxBrowser, 10)
		h := hub.New(b, hub.Options{Logger: slog.New(slog.DiscardHandler)})
		h.TabOpened("T", "https://s.test/", "S")
		h.Update(core.Source{Key: "d", Tab: "T", Frame: "F", Origin: "https://s.test", URL: "https://s.test/", Backend: "polyfill"},
			[]core.Tool{{Name: "t", Description: "d"}}, nil)
		s := New(t.Context(), h, Options{Version: "test", Logger: slog.New(slog.DiscardHandler),
			TraceContext: func(ctx context.Context, traceparent, tracestate string) context.Context {
				return context.WithValue(ctx, traceKey{}, traceparent+"|"+tracestate)
			}})
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		err := s.Synced(ctx)
		cancel()
		if err != nil || !s.tools.Has("s_test_t") {
			t.Fatalf("the tool was not listed (%v)", err)
		}
		p := newPipeSession(t, s, fast)
		p.send(legacyInit)
		p.next()
		p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		for i, tt := range tests {
			p.send(call(string(rune('1'+i)), tt.meta))
			if got := p.next(); !strings.Contains(got, `"text":"ok"`) {
				t.Fatalf("fast %v, %s: %s", fast, tt.name, got)
			}
			if got := <-b; got != tt.want {
				t.Errorf("fast %v, %s: the call's context has %q, want %q", fast, tt.name, got, tt.want)
			}
		}
	}
}
