package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

// rawLister lists tools over streamable HTTP in a session of its own, with
// plain HTTP requests whose answers it reads to the last byte and does not
// decode: its time is the server's answer and the loopback transport,
// without the client-side decoding that the go-sdk client adds (which, for
// a large list, is most of what mcp.ClientSession.Tools takes).
type rawLister struct {
	endpoint string
	session  string
	hc       *http.Client
}

// protocolVersion is the MCP version the raw lister speaks: one that the
// server's stateful streamable HTTP handler takes.
const protocolVersion = "2025-11-25"

// newRawLister opens a session on the streamable HTTP endpoint.
func newRawLister(ctx context.Context, endpoint string) (*rawLister, error) {
	l := &rawLister{endpoint: endpoint, hc: &http.Client{Timeout: 30 * time.Second}}
	h, _, err := l.post(ctx, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+protocolVersion+
		`","capabilities":{},"clientInfo":{"name":"webmcp-cdp-bench-raw","version":"1"}}}`)
	if err != nil {
		return nil, fmt.Errorf("raw HTTP initialize: %w", err)
	}
	if l.session = h.Get("Mcp-Session-Id"); l.session == "" {
		return nil, fmt.Errorf("raw HTTP initialize: the server gave no Mcp-Session-Id")
	}
	if _, _, err := l.post(ctx, `{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`); err != nil {
		return nil, fmt.Errorf("raw HTTP notifications/initialized: %w", err)
	}
	return l, nil
}

// post sends one JSON-RPC message and reads the whole answer.
func (l *rawLister) post(ctx context.Context, body string) (http.Header, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.endpoint, bytes.NewBufferString(body))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if l.session != "" {
		req.Header.Set("Mcp-Session-Id", l.session)
		req.Header.Set("Mcp-Protocol-Version", protocolVersion)
	}
	resp, err := l.hc.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the answer: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		return nil, nil, fmt.Errorf("HTTP %s: %.200s", resp.Status, data)
	}
	return resp.Header, data, nil
}

// list lists every page of tools and returns the bytes read.
func (l *rawLister) list(ctx context.Context) (int, error) {
	n, cursor := 0, ""
	for page := 2; ; page++ {
		params := `{}`
		if cursor != "" {
			params = `{"cursor":"` + cursor + `"}`
		}
		_, data, err := l.post(ctx, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":%s}`, page, params))
		if err != nil {
			return n, fmt.Errorf("raw HTTP tools/list: %w", err)
		}
		if !bytes.Contains(data, []byte(`"tools":[`)) {
			return n, fmt.Errorf("raw HTTP tools/list: no tools in the answer %.200q", data)
		}
		n += len(data)
		const key = `"nextCursor":"`
		i := bytes.Index(data, []byte(key)) // the envelope's, before the tools
		if i < 0 {
			return n, nil
		}
		rest := data[i+len(key):]
		end := bytes.IndexByte(rest, '"')
		if end < 0 {
			return n, fmt.Errorf("raw HTTP tools/list: a cursor without its end")
		}
		cursor = string(rest[:end])
	}
}
