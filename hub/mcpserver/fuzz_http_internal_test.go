package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// The fuzz targets of what the MCP edge parses from clients (issue 26):
// FuzzHTTP here, the others in fuzz_parse_internal_test.go. Their seed
// corpora (testdata/fuzz/FuzzX) were captured from real traffic: the
// go-sdk client at 2026-07-28 (server/discover, tools/list, tools/call)
// and forced to 2025-11-25 (initialize, the session's requests) against
// this server over HTTP, and its lines over stdio. CI runs each for a
// minute (.ci/run); a crasher the fuzzer finds is kept there and runs as
// a test with every go test.

// echoBrowser answers every call with its input.
type echoBrowser struct{}

func (echoBrowser) Invoke(_ context.Context, docKey, tool string, input json.RawMessage) (core.Result, error) {
	return core.Result{Kind: "json", Value: fmt.Sprintf(`{"doc":%q,"tool":%q,"input":%s}`, docKey, tool, input)}, nil
}

// fuzzBound is how long a request may run: a request that waits by
// design (subscriptions/listen, an older client's GET stream) ends with
// its context, after fuzzWait.
const (
	fuzzWait  = 100 * time.Millisecond
	fuzzBound = 5 * time.Second
)

// fuzzStatuses are the answers the endpoint may give a request.
var fuzzStatuses = []int{
	http.StatusOK, http.StatusAccepted, http.StatusNoContent,
	http.StatusBadRequest, http.StatusForbidden, http.StatusNotFound, http.StatusMethodNotAllowed,
	http.StatusNotAcceptable, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType,
}

// FuzzHTTP sends a request of arbitrary method, version and MCP headers
// and body into the /mcp handler (the revision router, the Mcp-Param
// check, both go-sdk handlers) of a server over a browser that echoes,
// with a page tool whose argument region is mirrored in Mcp-Param-Region.
// It never panics, answers within fuzzBound with a status of
// fuzzStatuses, a 200 answer to a request with an id carries that id, and
// a 2026-07-28 request whose headers disagree with its body is not served
// (checkHeadersAgree).
func FuzzHTTP(f *testing.F) {
	logger := slog.New(slog.DiscardHandler)
	h := hub.New(echoBrowser{}, hub.Options{Logger: logger})
	h.Update(core.Source{Key: "d1", Tab: "tab1", Frame: "f1", Origin: "http://127.0.0.1:8080", URL: "http://127.0.0.1:8080/", Backend: core.BackendPolyfill},
		[]core.Tool{
			{Name: "echo_0", Description: "Echo.", InputSchema: []byte(`{"type":"object","properties":{"text":{"type":"string"}}}`)},
			{Name: "region", Description: "By region.", InputSchema: []byte(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"n":{"type":"integer","x-mcp-header":"N"}}}`)},
		}, nil)
	srv := New(f.Context(), h, Options{Version: "fuzz", Logger: logger})
	if err := srv.Synced(f.Context()); err != nil {
		f.Fatal(err)
	}
	const bound = "127.0.0.1:8808"
	handler, err := srv.httpHandler(HTTPOptions{MaxBodyBytes: 64 << 10}, bound, true, http.NotFoundHandler())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, method, version, mcpMethod, mcpName, session, param string, body []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), fuzzWait)
		defer cancel()
		r, err := http.NewRequestWithContext(ctx, method, "http://"+bound+"/mcp", bytes.NewReader(body))
		if err != nil {
			return // not a request a client could send
		}
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		for _, kv := range [][2]string{{headerProtocolVersion, version}, {headerMethod, mcpMethod}, {headerName, mcpName},
			{headerSessionID, session}, {"Mcp-Param-Region", param}} {
			if kv[1] != "" {
				r.Header.Set(kv[0], kv[1])
			}
		}
		w := httptest.NewRecorder()
		done := make(chan struct{})
		go func() {
			defer close(done)
			handler.ServeHTTP(w, r)
		}()
		select {
		case <-done:
		case <-time.After(fuzzBound):
			t.Fatalf("no answer within %v", fuzzBound)
		}
		if !slices.Contains(fuzzStatuses, w.Code) {
			t.Fatalf("status %d: %.300s", w.Code, w.Body)
		}
		if w.Code == http.StatusOK {
			checkAnswerID(t, body, w)
			if version >= protocol20260728 {
				checkHeadersAgree(t, r.Header, body, w)
			}
		}
	})
}

// checkHeadersAgree fails when a 2026-07-28 request was served although
// its Mcp-Method or Mcp-Name header disagrees with its body, or, for a
// call of the tool region, its Mcp-Param-Region with the argument region.
// The answer may carry a JSON-RPC error (then the request was not served).
func checkHeadersAgree(t *testing.T, h http.Header, body []byte, w *httptest.ResponseRecorder) {
	if strings.Contains(w.Body.String(), `"error":{`) {
		return
	}
	var req struct {
		Method string `json:"method"`
		Params struct {
			Name      string         `json:"name"`
			Arguments map[string]any `json:"arguments"`
		} `json:"params"`
	}
	if jsonv2.Unmarshal(body, &req) != nil {
		return
	}
	if m := h.Get(headerMethod); m != "" && m != req.Method {
		t.Fatalf("served %s with Mcp-Method %q: %.300s", req.Method, m, w.Body)
	}
	if req.Method != "tools/call" {
		return
	}
	if n := h.Get(headerName); n != "" && n != req.Params.Name {
		t.Fatalf("served a call of %q with Mcp-Name %q: %.300s", req.Params.Name, n, w.Body)
	}
	if region, ok := req.Params.Arguments["region"].(string); ok && req.Params.Name == "127_0_0_1_8080_region" {
		if got, ok := decodeHeaderValue(h.Get("Mcp-Param-Region")); !ok || got != region {
			t.Fatalf("served a call with region %q and Mcp-Param-Region %q: %.300s", region, h.Get("Mcp-Param-Region"), w.Body)
		}
	}
}

// checkAnswerID fails when body is a JSON-RPC request with an id and the
// answer's response (the body, or an event of its stream) has another.
// An answer cut short by the end of the request's context has none. The
// checks read JSON as the SDK does: member names exact, no duplicates
// (jsonv2), where encoding/json would match names in any case.
func checkAnswerID(t *testing.T, body []byte, w *httptest.ResponseRecorder) {
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if jsonv2.Unmarshal(body, &req) != nil || len(req.ID) == 0 || req.Method == "" || string(req.ID) == "null" {
		return
	}
	var msgs []string
	if strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
		for line := range strings.SplitSeq(w.Body.String(), "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok && strings.TrimSpace(d) != "" {
				msgs = append(msgs, d)
			}
		}
	} else {
		msgs = []string{w.Body.String()}
	}
	var want any
	if json.Unmarshal(req.ID, &want) != nil {
		return
	}
	for _, m := range msgs {
		var resp struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if jsonv2.Unmarshal([]byte(m), &resp) != nil || (resp.Result == nil && resp.Error == nil) {
			continue // a notification or a request of the server's
		}
		var got any
		if json.Unmarshal(resp.ID, &got) != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("the request's id is %s, the answer's %s: %.300s", req.ID, resp.ID, m)
		}
		return
	}
}
