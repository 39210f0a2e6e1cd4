// Package ci is webmcp-cdp's CI mode, for teams that test their own site's
// WebMCP tools: it opens a page in a browser behind a hub, waits for the
// page's tools to settle, lints them, calls them, and checks the results
// against a small spec file, reporting a summary and JUnit XML.
//
// The package knows no CDP: it sees the browser through the hub (the tools,
// their routed names, the tabs) and through a small Tabs interface (open a
// tab with a setup, close it, how its page loaded, what it did), so it is
// tested with a fake browser. cmd/webmcp-cdp wires it to a launched
// Chromium (cdp/diagnose.go) for the inspect, call and test commands.
//
// # Waiting for the page
//
// A page counts as settled once its main document loaded (its load event
// fired), the hub knows its tab, it has tools (served or refused), every
// tool it must have is there (PageOptions.WaitFor), and its tools have
// stayed the same for Session.Settle (DefaultSettle, 1.5 s, by default) since the last
// change or the load event, and the page ran what it had due when that
// quiet period ended (Tabs.Drain: on a starved machine a page's timer can
// run long after its time, and the tools it registers must still count).
// The wait is driven by events: the hub's
// (hub.Changed) and the page's load (Tabs.PageLoad); it reads the page's
// tools when one fires and when a quiet period ends, and restarts the quiet
// period whenever they differ; nothing polls on a clock. Session.Timeout
// bounds it. A main document that answers with an HTTP status of 400 or
// more, or fails (a refused connection, an unknown host), ends the wait at
// once with a *LoadError; a page with no tools by the timeout is a Page
// without tools, and Explain words its diagnosis (failed requests, console
// errors, uncaught exceptions, whether it has a WebMCP API). Closing a page
// waits, the same way, until the hub has let go of the tab's tools.
//
// # Specs and reports
//
// A spec (spec.go, read with the place of every value by specdecode.go, so
// that every mistake names file:line:column) lists pages, their tools and
// calls with expected results (match.go). A Runner turns each page into a
// suite of cases: its load (an error when it did not load, its calls then
// skipped), its tools, a lint case per tool, and its calls. Reports are
// text, JSON, JUnit XML, GitHub Actions annotations and a Markdown summary
// (reports.go, junit.go).
//
// A recorded session (hub/record, --record) is a spec whose calls expect
// snapshots: whole results compared structurally, with ignore and matches
// marks for the values that change (snapshot.go), and ${NAME} placeholders
// for its secrets (Spec.Substitute). A run with Runner.Update takes the
// results that differ as the new snapshots, and UpdateSnapshots writes
// them into the file, keeping the marks (update.go).
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
