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
	// DialogsMetaKey is the _meta key of tools/call by which a caller says
	// who answers a page dialog during the call (docs/decisions/
	// 2026-11-26-relay-elicitation.md): DialogsAsk (its client can be
	// asked: the dialog comes back as an input request, MCP's multi
	// round-trip result), or a --dialogs policy (accept, dismiss, fail).
	// Without it, nobody is asked: an alert is accepted, the rest
	// dismissed.
	DialogsMetaKey = "webmcp-cdp/dialogs"
	// DialogsAsk is the DialogsMetaKey value of a caller that can be asked.
	DialogsAsk = "ask"
	// QuestionKey is the key of the one input request a tools/call result
	// may carry, and of its answer in the retry's inputResponses.
	QuestionKey = "dialog"
	// MaxRequestState bounds a tools/call's requestState, in bytes.
	MaxRequestState = 256
	// MaxAnswerBytes bounds a retry's inputResponses, in bytes.
	MaxAnswerBytes = 64 << 10
	// MaxQuestionBytes bounds the message of an input request, in bytes.
	MaxQuestionBytes = 16 << 10
	// MaxQuestionSchemaBytes bounds the schema of an input request.
	MaxQuestionSchemaBytes = 8 << 10
)

// ToolsCallParams are the params of tools/call. Beyond the seed: _meta may
// say who answers the page's dialogs, and a retry after a result that
// asked a question (inputRequests) carries that result's requestState and
// the answer, as MCP 2026-07-28's tools/call does.
type ToolsCallParams struct {
	Name           string          `json:"name"`                     // the routed name
	Arguments      json.RawMessage `json:"arguments,omitempty"`      // the tool's input
	Meta           *ToolsCallMeta  `json:"_meta,omitempty"`          // who answers dialogs
	RequestState   string          `json:"requestState,omitempty"`   // a retry's state
	InputResponses json.RawMessage `json:"inputResponses,omitempty"` // a retry's answer
}

// ToolsCallMeta is the _meta of tools/call.
type ToolsCallMeta struct {
	// Dialogs is DialogsAsk or a --dialogs policy (see DialogsMetaKey).
	Dialogs string `json:"webmcp-cdp/dialogs,omitempty"`
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
