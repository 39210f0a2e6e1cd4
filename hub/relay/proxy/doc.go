// Package proxy is the MCP Proxy Protocol of seed 001 (JSON-RPC 2.0 over
// WebSocket): its messages, its connections, and the proxy server that
// routes between browsers and MCP clients. It is a message router and knows
// nothing of the hub, tools or tabs (go list -deps shows no webmcp-cdp
// package).
//
// How a message flows through the Server:
//
//  1. A browser dials /extension. The proxy sends authenticate (id
//     "proxy:1"), checks the JWT in the answer, and sends authenticated
//     with the browser's extension id (server_browsers.go).
//  2. An MCP client dials /mcp and sends mcp_handshake with its JWT, then
//     list_extensions and connect; the proxy answers these itself and sends
//     status to the browser and its clients (server_clients.go).
//  3. Every other request of a connected client is parsed and checked
//     (ParseMessage), rebuilt with its id mapped to
//     "<connection id>:<client id>", and queued to the browser (forward).
//  4. The browser's answer is matched to the pending request, given back the
//     client's own id, and queued to that client (answer). A browser that
//     goes away sends disconnected to its clients and fails what is in
//     flight; a request not answered in time fails with -32000.
//
// Each connection (peer.go) has a bounded outbound queue and one writer, so
// a slow peer is dropped rather than holding up others. The methods a
// webmcp-cdp browser adds (tools/list, tools/call, webmcp/waitForChanges)
// are declared in methods.go; the proxy forwards them like any other.
package proxy
