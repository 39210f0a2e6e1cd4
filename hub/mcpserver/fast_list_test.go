package mcpserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/hub/mcpserver"
)

// TestSplicedListIsTheSDKs lists the 2,200-tool catalog (three pages)
// over a stdio transport that splices the pages in (Server set) and over
// one that does not, and wants the same bytes, in both protocol
// generations.
func TestSplicedListIsTheSDKs(t *testing.T) {
	srv, _ := catalogServer(t)
	const meta = `"_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`
	for _, tc := range []struct{ name, init, meta string }{
		{"2025-11-25", `"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}`, ""},
		{"2026-07-28", `"server/discover","params":{` + meta + `}`, meta},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var listings [2][]string
			for i, fast := range []bool{false, true} {
				inR, inW := io.Pipe()
				outR, outW := io.Pipe()
				tr := &mcpserver.StdioTransport{In: inR, Out: outW}
				if fast {
					tr.Server = srv
				}
				ctx, cancel := context.WithCancel(t.Context())
				ss, err := srv.MCP().Connect(ctx, tr, nil)
				if err != nil {
					t.Fatal(err)
				}
				r := bufio.NewReaderSize(outR, 4<<20)
				rpc := func(id, rest string) string {
					if _, err := io.WriteString(inW, `{"jsonrpc":"2.0","id":`+id+`,"method":`+rest+"}\n"); err != nil {
						t.Fatal(err)
					}
					for {
						line, err := r.ReadString('\n')
						if err != nil {
							t.Fatal(err)
						}
						if strings.HasPrefix(line, `{"jsonrpc":"2.0","id":`+id+`,`) {
							return line
						}
					}
				}
				rpc("0", tc.init)
				cursor := ""
				for page := 1; ; page++ {
					params := tc.meta
					if cursor != "" {
						params = strings.TrimPrefix(tc.meta+`,"cursor":"`+cursor+`"`, ",")
					}
					line := rpc(string(rune('0'+page)), `"tools/list","params":{`+params+`}`)
					listings[i] = append(listings[i], line)
					_, rest, ok := strings.Cut(line, `"nextCursor":"`)
					if !ok {
						break
					}
					cursor, _, _ = strings.Cut(rest, `"`)
				}
				inW.Close()
				ss.Close()
				cancel()
				outR.Close()
			}
			slow, fast := listings[0], listings[1]
			if len(slow) != 3 || len(fast) != len(slow) {
				t.Fatalf("pages: SDK %d, spliced %d; want 3", len(slow), len(fast))
			}
			for p := range slow {
				if fast[p] != slow[p] {
					t.Errorf("page %d differs (%d bytes spliced, %d from the SDK):\n spliced: %.300s\n     sdk: %.300s", p+1, len(fast[p]), len(slow[p]), fast[p], slow[p])
				}
				if strings.Contains(fast[p], "webmcp-cdp-splice") {
					t.Errorf("page %d has a marker left in it", p+1)
				}
			}
		})
	}
}

// TestSplicedHTTPListIsTheSDKs lists the 2,200-tool catalog over
// streamable HTTP (pages spliced in by the endpoint) and in memory (no
// splicing) with the go-sdk client, and wants the same tools.
func TestSplicedHTTPListIsTheSDKs(t *testing.T) {
	srv, _ := catalogServer(t)
	h, err := srv.ServeHTTP(mcpserver.HTTPOptions{Addr: "127.0.0.1:0"}, make(chan error, 1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	ctx := t.Context()
	client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil)
	viaHTTP, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + h.Addr() + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer viaHTTP.Close()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.MCP().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	inMemory, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer inMemory.Close()
	var lists [2][]byte
	for i, cs := range []*mcp.ClientSession{viaHTTP, inMemory} {
		var tools []*mcp.Tool
		for tool, err := range cs.Tools(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			tools = append(tools, tool)
		}
		if len(tools) < 2200 {
			t.Fatalf("listed %d tools, want 2200 and our own", len(tools))
		}
		lists[i], _ = json.Marshal(tools)
	}
	if !bytes.Equal(lists[0], lists[1]) {
		t.Errorf("the HTTP listing (%d bytes) differs from the in-memory one (%d bytes)", len(lists[0]), len(lists[1]))
	}
}
