package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// linesPage is a page server's pipe that delivers fixed messages, then
// ends.
type linesPage struct{ msgs [][]byte }

func (p *linesPage) Server() core.PageServer { return core.PageServer{ID: "t:mcp-default"} }
func (p *linesPage) Recv(context.Context) ([]byte, error) {
	if len(p.msgs) == 0 {
		return nil, core.ErrPageServerGone
	}
	m := p.msgs[0]
	p.msgs = p.msgs[1:]
	return m, nil
}
func (p *linesPage) Send(context.Context, []byte, bool) error { return nil }
func (p *linesPage) Done() <-chan struct{}                    { return nil }
func (p *linesPage) Dropped() map[string]int                  { return nil }
func (p *linesPage) DropSignal() <-chan struct{}              { return nil }
func (p *linesPage) Close()                                   {}

// FuzzPageServerMessages reads what an MCP-B page server sends (one
// message a line) as a page session does: the transport decodes each
// message, skips the malformed ones (ending the session after
// maxMalformed), passes progress on and peeks at the answers to our
// initialize (id 1) and tools/list (id 2); the tools of a tools/list
// answer become hub tools as listPageTools makes them. Nothing panics, and
// the transport ends with io.EOF or the malformed-message error.
func FuzzPageServerMessages(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true},"browser":{"cacheSupported":true}},"serverInfo":{"name":"shop","version":"1.0.0"}}}` + "\n" +
			`{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"add_to_cart","description":" Add an item ","inputSchema":{"type":"object","properties":{"sku":{"type":"string"}},"required":["sku"]},"annotations":{"readOnlyHint":false,"cache":true,"title":"Add"}}]}}`,
		`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}` + "\n" + `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p1","progress":1,"total":2}}`,
		`{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"Method not found"}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"x","inputSchema":{"type":"string"}},{"name":"","annotations":null}],"nextCursor":"c2"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"elicitation/create","params":{"message":"ok?","requestedSchema":{"type":"object"}}}`,
		"not json\n{}\n[]\n" + `{"jsonrpc":"1.0"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		page := &linesPage{msgs: bytes.Split(data, []byte("\n"))}
		tr := &pageTransport{conn: page, notes: new(atomic.Int64), peek: &pagePeek{}}
		for i, m := range []string{"initialize", "tools/list"} {
			id, _ := jsonrpc.MakeID(float64(i + 1))
			tr.peek.sent(&jsonrpc.Request{ID: id, Method: m})
		}
		conn, err := tr.Connect(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for {
			msg, err := conn.Read(context.Background())
			if err != nil {
				if !errors.Is(err, io.EOF) && !bytes.Contains([]byte(err.Error()), []byte("not JSON-RPC")) {
					t.Fatalf("the transport ended with %v", err)
				}
				break
			}
			res, ok := msg.(*jsonrpc.Response)
			if !ok || res.Error != nil || res.ID.Raw() != float64(2) {
				continue
			}
			var list mcp.ListToolsResult
			if json.Unmarshal(res.Result, &list) != nil {
				continue
			}
			for _, tl := range list.Tools {
				if tl == nil {
					continue
				}
				ann, cacheOK := tr.peek.toolAnnotations(tl.Name)
				ct := coreTool(tl, ann, cacheOK)
				if _, ok := ct.Annotations["cache"]; ok && !cacheOK {
					t.Fatalf("kept annotations.cache of a server without browser.cacheSupported: %v", ct.Annotations)
				}
				if ct.InputSchema != nil && !json.Valid(ct.InputSchema) {
					t.Fatalf("tool %q has a schema that is not JSON: %s", ct.Name, ct.InputSchema)
				}
			}
		}
	})
}
