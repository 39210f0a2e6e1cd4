// Package ci is webmcp-cdp's CI mode, for teams that test their own site's
// WebMCP tools: it opens a page in a browser behind a hub, waits for the
// page's tools to settle, lints them, calls them, and checks the results
// against a small spec file, reporting a summary and JUnit XML.
//
// The package knows no CDP: it sees the browser through the hub (the tools,
// their routed names, the tabs) and through a small Tabs interface (open and
// close a tab), so it is tested with a fake browser. cmd/webmcp-cdp wires it
// to a launched Chromium for the inspect, call and test commands.
//
// # Waiting for the tools
//
// The hub sees tools, not page loads, so a page counts as settled once the
// hub knows its tab and its tools (or refused tools) have stayed the same for
// Session.Settle (300 ms by default). A page that registers nothing is given
// until Session.SettleTimeout, and then reported as having no tools.
//
// # Refused tools
//
// Package cdp refuses tools that MCP clients cannot take (an inputSchema that
// is not an object, a description over the size limit, too many tools) and
// only logs why. Lints need those too, because a refused tool is exactly
// what a site's authors must hear about. Rather than change the seam between
// cdp and the hub for CI mode, RefusalLog wraps the slog handler and keeps
// the records whose message is "refused a tool" (or "refused a native tool")
// with their tool, url and reason attributes. The e2e tests pin the wording:
// if cdp ever logs refusals differently, they fail.
package ci
