package relay

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
)

// MCPTool turns a routed tool into its MCP definition, the way the local MCP
// server lists it: the page's schema (an empty object schema when the page
// gave none), the provenance in _meta["webmcp-cdp/source"], MCP's hints as
// annotations and the WebMCP-only hints in _meta["webmcp-cdp/annotations"].
//
// It mirrors hub/mcpserver's conversion, which is not exported; the e2e
// test that lists a page tool across the relay checks that the two agree.
// Like the local server's, the schema is one the MCP SDK accepts: a JSON
// object of type "object" (the hub validates arguments against the page's
// own schema anyway).
func MCPTool(rt hub.RoutedTool) *mcp.Tool {
	t := &mcp.Tool{
		Name:        rt.Name,
		Title:       rt.Tool.Title,
		Description: rt.Tool.Description,
		InputSchema: objectSchema(rt.Tool.InputSchema),
		Meta:        mcp.Meta{"webmcp-cdp/source": rt.Source},
	}
	a := rt.Tool.Annotations
	if len(a) == 0 {
		return t
	}
	ann := &mcp.ToolAnnotations{}
	ann.ReadOnlyHint, _ = a["readOnlyHint"].(bool)
	ann.IdempotentHint, _ = a["idempotentHint"].(bool)
	ann.Title, _ = a["title"].(string)
	if v, ok := a["destructiveHint"].(bool); ok {
		ann.DestructiveHint = &v
	}
	if v, ok := a["openWorldHint"].(bool); ok {
		ann.OpenWorldHint = &v
	}
	t.Annotations = ann
	extra := map[string]any{}
	for _, k := range []string{"untrustedContentHint", "consequentialHint", "debugging", "cache"} {
		if v, ok := a[k]; ok {
			extra[k] = v
		}
	}
	if len(extra) > 0 {
		t.Meta["webmcp-cdp/annotations"] = extra
	}
	return t
}

// objectSchema returns a schema of type "object": the page's when it is
// one, the page's with the type added when it has none, else the empty
// object schema.
func objectSchema(schema json.RawMessage) json.RawMessage {
	fallback := json.RawMessage(`{"type":"object"}`)
	var m map[string]any
	if len(schema) == 0 || json.Unmarshal(schema, &m) != nil || m == nil {
		return fallback
	}
	switch m["type"] {
	case "object":
		return schema
	case nil:
		m["type"] = "object"
		if out, err := json.Marshal(m); err == nil {
			return out
		}
	}
	return fallback
}
