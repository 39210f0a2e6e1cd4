package proxy

import "encoding/json"

// The methods a webmcp-cdp browser serves beyond the seed's browser methods.
// The proxy forwards them like any other method; they are here because both
// ends of the protocol speak them.
const (
	// MethodToolsList lists the routed tools, as MCP's tools/list does, with
	// the catalog's version in _meta["webmcp-cdp/version"].
	MethodToolsList = "tools/list"
	// MethodToolsCall calls a routed tool, as MCP's tools/call does.
	MethodToolsCall = "tools/call"
	// MethodWaitForChanges answers when the catalog's version differs from
	// params.since, or after params.timeoutMs: the browser stays passive
	// (it never sends a request or a notification of its own), and a client
	// still learns of changes at once.
	MethodWaitForChanges = "webmcp/waitForChanges"
	// VersionMetaKey is the _meta key of the catalog's version in tools/list.
	VersionMetaKey = "webmcp-cdp/version"
)

// ToolsCallParams are the params of tools/call.
type ToolsCallParams struct {
	Name      string          `json:"name"`                // the routed name
	Arguments json.RawMessage `json:"arguments,omitempty"` // the tool's input
}

// WaitParams are the params of webmcp/waitForChanges.
type WaitParams struct {
	// Since is the version the caller has.
	Since uint64 `json:"since"`
	// TimeoutMS is how long to wait at most (default 25 000, at most
	// 55 000).
	TimeoutMS int `json:"timeoutMs,omitempty"`
}

// WaitResult is the result of webmcp/waitForChanges.
type WaitResult struct {
	Version uint64 `json:"version"` // the catalog version now
}
