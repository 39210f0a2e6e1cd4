// Package relay implements remote mode: the MCP Proxy Protocol of seed 001
// (JSON-RPC 2.0 over WebSocket) with its three roles. The protocol and the
// proxy are in package proxy, which knows nothing of the hub; this package
// holds the two ends, and names the proxy's types (proxy.go) for the code
// that used them from here.
//
// How a tool call flows: an agent calls a tool on Remote (connect side),
// whose Client sends tools/call to the proxy; the proxy forwards it with a
// mapped id to the BrowserSide, whose session loop (browser.go) reads it,
// runs it on its own goroutine (browser_tools.go: Hub.Call), and writes the
// answer, which the proxy maps back to the agent's id.
//
//   - Server (package proxy) is the proxy. Browsers connect to /extension,
//     MCP clients to /mcp. The proxy asks each browser to authenticate (id "proxy:1"),
//     checks its JWT and sends the authenticated notification; it answers
//     the control methods mcp_handshake, list_extensions, connect and
//     disconnect itself; it forwards every other request of a connected
//     client to its browser with the id mapped to
//     "<connection id>:<client id>" (connectionId stripped) and maps the
//     answer back to the client's own id. It sends status when a browser's
//     clients change, and disconnected to each connected client when a
//     browser goes away, failing that client's requests in flight at once.
//   - BrowserSide is the seed's passive "extension", run next to a browser by
//     webmcp-cdp launch or attach. It sees the hub only through the Hub
//     interface (hub.go). It waits for authenticate, answers with its name
//     and token, and then only answers. It serves the seed's browser
//     methods (createTab, getTabs, selectTab, activateTab, closeTab,
//     browser_navigate, goBack, goForward, click, type, hover, screenshot,
//     and forwardCDPCommand when allowed) and the hub's routed tools as
//     tools/list and tools/call.
//   - Client speaks the MCP-client end of the protocol, and Remote builds on
//     it the MCP server that webmcp-cdp connect runs on stdio for a local
//     agent: the remote browser's routed tools, kept in step, plus tools of
//     its own for the browser methods.
//
// # What the seed leaves open, and what this package does
//
// Tool list changes. The seed's browser never initiates a message, so the
// browser side does not push list_changed. It serves webmcp/waitForChanges
// {since, timeoutMs}, a long poll that answers when the catalog's version
// (tools/list carries it in _meta["webmcp-cdp/version"]) differs from since.
// Remote keeps one such request open per connection; a change reaches the
// local MCP client as notifications/tools/list_changed within a round trip.
//
// The selected tab. Forwarded ids say which connection a request comes from
// (the part before the first colon), so the browser side remembers a
// selected tab per connection: two clients of one browser each work in
// their own tab. A method without tabId acts on the connection's selected
// tab, else the active tab, else the only tab.
//
// Ids. A client's id may be a number or a string; the mapped id is its text
// after the connection id, and the proxy keeps the original (with its JSON
// type) to restore it, so 1 and "1" from one client are the same request in
// flight and the second is refused. String ids are decoded before the
// reserved-prefix check, so an escaped "\u0070roxy:" is refused too.
//
// Security. Tokens are HS256 JWTs (github.com/golang-jwt/jwt/v5) with sub
// (the user id) and exp, both required; a connection is closed when its
// token expires. A client lists and reaches only browsers of its own user,
// and another user's browser id gets the same answer as an unknown one. A
// browser answers authenticate only to ids with the proxy: prefix, which a
// client can never produce. Every connection has a message size limit, a
// bounded outbound queue (a peer that cannot keep up is dropped rather than
// slowing others), pings, and, for clients, a rate limit and a bound on
// requests in flight. Parsing rejects duplicate members and rebuilds every
// forwarded message from the checked fields, so nothing unchecked passes.
package relay
