// Package hub keeps one catalog of the WebMCP tools that pages register,
// across tabs, frames and sites, names them for MCP clients, and routes each
// call to the document that owns the tool.
//
// The hub knows nothing of CDP. A browser reports into it (Update, DropDoc,
// TabOpened, TabClosed, SetActive) and the hub calls back into the browser
// through the small Browser interface (and Opener, to reopen the page of a
// cached tool, and TabCloser, to close a tab it opened and will not use), so
// it is tested with a fake browser.
//
// Beyond naming and routing, the hub applies the policies that treat pages
// as untrusted: per-document limits and a per-tab registration rate
// (Limits), allowed and denied origins (OriginPolicy), validation of call
// arguments against each tool's inputSchema before the page is called, a
// cap on result size, and a bound on the calls in flight per tab. Tools a
// page marks with annotations.cache stay listed after their tab closes, and
// across restarts through a state file written atomically.
//
// How the pieces fit, by file:
//
//   - hub.go: the Hub, its Options, and the interfaces it needs from a
//     browser; the listing (Tools, Version).
//   - tabs.go: the open tabs, the active one and their recency (TabOpened,
//     TabClosed, SetActive, Tabs, TabOrder).
//   - search.go: tool search over the catalog (Search, Closest), an
//     inverted index rebuilt on the first search after a change;
//     unknown.go: the error of a call to a name the catalog lacks.
//   - update.go: the one admission path a document's tools take into the
//     catalog (Update, DropDoc), with refusals recorded as data.
//   - catalog.go and names.go: the groups of documents that share a tool,
//     and the routed names they get, recomputed only where a change touches.
//   - call.go: the call path (Call): route, validate (validate.go), invoke,
//     shape the result (results.go); a cached tool reopens its page.
//   - cache.go and state.go: cached tools and the state file they survive
//     restarts in, written by one background writer.
//   - policy.go: limits, the registration budget and the origin policy.
//   - watch.go and refusals.go: subscriptions (Watch, WatchUse, WatchCalls, Changed)
//     and the refusal log.
//   - hooks.go: the hooks told of each finished call (Options.Hooks,
//     HookCalls: a call makes only what its hooks ask for) and of
//     registrations and refusals.
//
// Every method of a Hub is safe for concurrent use. The catalog is guarded
// by one lock that is never held while the hub calls out (into the browser,
// to a subscriber, or to the disk).
package hub
