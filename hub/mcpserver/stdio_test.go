package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestStdioBadLinesDoNotEndTheSession sends each kind of bad line that used
// to end the server (issue 15), each followed by a valid request, to a real
// go-sdk server over StdioTransport: every bad line gets its error reply, and
// the valid request after it is answered.
func TestStdioBadLinesDoNotEndTheSession(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "0"}, nil)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tr := &StdioTransport{In: inR, Out: outW, MaxLine: 64 << 10, Logger: slog.New(slog.DiscardHandler)}
	ss, err := srv.Connect(ctx, tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	replies := make(chan map[string]any, 16)
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var m map[string]any
			json.Unmarshal(sc.Bytes(), &m)
			replies <- m
		}
	}()
	send := func(line string) {
		t.Helper()
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatalf("writing %q: %v", line, err)
		}
	}
	next := func() map[string]any {
		t.Helper()
		select {
		case m := <-replies:
			return m
		case <-time.After(10 * time.Second):
			t.Fatal("no reply")
			return nil
		}
	}
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"0"}}}`)
	if m := next(); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	for i, tc := range []struct {
		name, line string
		code       float64
		id         any
	}{
		{"not JSON", `{not json`, -32700, nil},
		{"a closing brace", `}`, -32700, nil},
		{"an empty batch", `[]`, -32600, nil},
		{"a batch", `[{"jsonrpc":"2.0","id":9,"method":"ping"}]`, -32600, nil},
		{"null", `null`, -32600, nil},
		{"a number", `42`, -32600, nil},
		{"a method that is a number", `{"jsonrpc":"2.0","id":7,"method":5}`, -32600, float64(7)},
		{"JSON-RPC 1.0", `{"jsonrpc":"1.0","id":"x","method":"ping"}`, -32600, "x"},
		{"an object id", `{"jsonrpc":"2.0","id":{},"method":"ping"}`, -32600, nil},
		{"binary bytes", "\x00\x01\xfe\xff", -32700, nil},
		{"too deep to parse", `{"a":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`, -32700, nil},
		{"over the line limit", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("a", 70000) + `"}}`, -32600, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			send(tc.line)
			m := next()
			e, _ := m["error"].(map[string]any)
			if e == nil || e["code"] != tc.code || m["id"] != tc.id {
				t.Errorf("reply %v, want error %v with id %v", m, tc.code, tc.id)
			}
			id := 100 + i
			send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, id))
			if m := next(); m["id"] != float64(id) || m["result"] == nil {
				t.Errorf("the ping after it got %v", m)
			}
		})
	}
}
