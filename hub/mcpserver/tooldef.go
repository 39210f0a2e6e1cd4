package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file holds what a ToolSet is made of: a tool entry, rendered once,
// and the check a tool passes before it joins a set (the SDK's own AddTool
// would panic on what it refuses).

// ToolEntry is one tool of a ToolSet.
type ToolEntry struct {
	// Name is the tool's name.
	Name string
	// JSON is the tool's definition exactly as tools/list carries it: a
	// compact JSON object (an mcp.Tool). Two entries with equal JSON are the
	// same tool.
	JSON json.RawMessage
	// Handler runs a tools/call of the tool. The go-sdk's own tools/call
	// path runs it, so multi round-trip results work as for any tool.
	Handler mcp.ToolHandler
	// App, when set, is the tool's definition for a client that declares
	// MCP Apps (apps.go); JSON is then the one for other clients.
	App json.RawMessage
	// AppOnly lists the tool only to clients that declare MCP Apps (a
	// tool its view calls, kept from the model); it is callable by all.
	AppOnly bool
}

// RenderTool renders t for a ToolEntry: compact JSON, with no HTML escaping
// (as the go-sdk encodes its messages).
func RenderTool(t *mcp.Tool) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(t); err != nil {
		return nil, fmt.Errorf("rendering tool %q: %w", t.Name, err)
	}
	// A copy of the exact size: the JSON is kept for as long as the tool
	// is listed, and the encoder's buffer has room to spare.
	return bytes.Clone(bytes.TrimRight(buf.Bytes(), "\n")), nil
}

// CheckTool checks a tool definition as the go-sdk's AddTool does (which
// panics on what it refuses), since the tools of a ToolSet never go through
// AddTool: a name, an input schema that is a JSON object of type "object",
// and valid x-mcp-header annotations when the schema has any.
func CheckTool(t *mcp.Tool) error {
	if t.Name == "" {
		return fmt.Errorf("a tool has no name")
	}
	raw, ok := t.InputSchema.(json.RawMessage)
	if !ok {
		b, err := json.Marshal(t.InputSchema)
		if err != nil {
			return fmt.Errorf("the input schema of %q does not encode: %w", t.Name, err)
		}
		raw = b
	}
	var m struct {
		Type any `json:"type"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return fmt.Errorf("the input schema of %q is not a JSON object: %w", t.Name, err)
	}
	if m.Type != "object" {
		return fmt.Errorf("the input schema of %q does not have type \"object\" (got %v)", t.Name, m.Type)
	}
	if bytes.Contains(raw, []byte("x-mcp-header")) {
		// Rare: let the SDK itself judge, on a scratch server.
		return sdkAccepts(t)
	}
	return nil
}

// sdkAccepts adds t to a scratch go-sdk server and turns its panic into an
// error.
func sdkAccepts(t *mcp.Tool) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the MCP SDK refuses %q: %v", t.Name, p)
		}
	}()
	srv := mcp.NewServer(&mcp.Implementation{Name: "check", Version: "0"}, &mcp.ServerOptions{Logger: slog.New(slog.DiscardHandler)})
	srv.AddTool(t, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return nil, nil })
	return nil
}
