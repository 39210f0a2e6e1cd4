package relay

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/hub/mcpserver"
)

// MCPTool turns a routed tool into its MCP definition, exactly as the local
// MCP server lists it (mcpserver.MCPTool).
func MCPTool(rt hub.RoutedTool) *mcp.Tool {
	return mcpserver.MCPTool(rt, nil)
}
