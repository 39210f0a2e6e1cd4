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
// Session.Settle (300 ms by default). The wait is driven by the hub's
// events: it reads the page's tools when hub.Changed fires and when a quiet
// period ends, and restarts the quiet period whenever they differ; nothing
// polls on a clock. A page that registers nothing is given until
// Session.SettleTimeout, and then reported as having no tools. Closing a
// page waits, the same way, until the hub has let go of the tab's tools.
//
// # Refused tools
//
// Lints need the tools webmcp-cdp refused (an inputSchema that is not an
// object, a description over the size limit, too many tools, a bad name),
// because a refused tool is exactly what a site's authors must hear about.
// They come from the hub's refusal log (hub.Refusals), the one record that
// the status page and the log read too, with a reason code (core.Reason)
// that Tool.Reason and Finding.Reason carry.
package ci
