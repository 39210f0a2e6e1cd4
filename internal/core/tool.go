package core

import "encoding/json"

// Tool is a tool as a page declared it, before the hub admits it.
type Tool struct {
	// Name is the page's own name for the tool.
	Name string
	// Title is the optional human-readable title.
	Title string
	// Description is the page's description.
	Description string
	// InputSchema is the JSON Schema of the input, or nil when the page gave
	// none.
	InputSchema json.RawMessage
	// Annotations holds the page's hints (readOnlyHint, consequentialHint,
	// untrustedContentHint, cache, ...).
	Annotations map[string]any
	// OutputSchema is the JSON Schema of the tool's structuredContent (a
	// JSON object of type "object"), or nil when the page gave none.
	OutputSchema json.RawMessage
	// Icons is the tool's icons, a JSON array of MCP Icon objects ({src,
	// mimeType?, sizes?, theme?}), or nil.
	Icons json.RawMessage
	// Meta is the tool's own _meta, a JSON object, or nil. Admission drops
	// the keys a page may not set (those of MCP's reserved prefixes, such
	// as io.modelcontextprotocol/, and webmcp-cdp's own webmcp-cdp/), so
	// whatever is here after the hub came from the page and may be shown
	// as the page's.
	Meta json.RawMessage
	// Userscript is the @name of the operator's userscript (--userscript)
	// that registered the tool in the page, as the browser tells it; empty
	// for the page's own tools.
	Userscript string
	// TaskSupport is an MCP-B page server tool's execution.taskSupport as
	// its tools/list gave it: "forbidden", "optional" or "required" (any
	// other value is dropped when read), or "" when it declared none.
	TaskSupport string
}

// Backend names the WebMCP implementation that holds a document's tools.
type Backend string

// The backends.
const (
	// BackendPolyfill is webmcp-cdp's page script.
	BackendPolyfill Backend = "polyfill"
	// BackendNative is the browser's own document.modelContext, reached
	// through the CDP WebMCP domain.
	BackendNative Backend = "native"
)

// Source is one document that offers tools: the current page of one frame,
// as the browser knows it.
type Source struct {
	// Key identifies the document for the browser; the hub passes it back to
	// the browser's Invoke.
	Key string
	// Tab identifies the tab (top-level target) the document is in.
	Tab string
	// Frame is the document's frame id.
	Frame string
	// Origin and URL are the document's, as the browser reports them.
	Origin, URL string
	// Backend is the WebMCP implementation of the document.
	Backend Backend
	// Browser is the short name of the browser the document is in, when
	// one hub serves several (cdp/multi); empty for a single browser.
	Browser string
}

// Provenance says where a routed tool leads: what MCP clients find in the
// tool's _meta["webmcp-cdp/source"]. The hub fills it; the MCP edge renders
// it, into _meta and into the short tag in front of the description. It is
// never parsed back out of text.
type Provenance struct {
	// Tool is the page's own name for the tool.
	Tool string `json:"tool"`
	// Origin and URL are the document's that a call goes to (for a cached
	// tool, the page it was last seen on).
	Origin string `json:"origin"`
	URL    string `json:"url"`
	// Tab is the number of the tab a call goes to (0 for a cached tool).
	Tab int `json:"tab,omitempty"`
	// Frame is the frame id of that document.
	Frame string `json:"frame,omitempty"`
	// Backend is that document's.
	Backend Backend `json:"backend"`
	// Tabs lists the tabs that have the tool, when more than one document
	// has it.
	Tabs []int `json:"tabs,omitempty"`
	// Cached is set for a tool no open page has now, listed from the cache.
	Cached bool `json:"cached,omitempty"`
	// Browser is the short name of the browser a call goes to, when one hub
	// serves several; empty for a single browser.
	Browser string `json:"browser,omitempty"`
	// Userscript is the @name of the operator's userscript that registered
	// the tool in that document (core.Tool.Userscript); empty for the
	// page's own tool.
	Userscript string `json:"userscript,omitempty"`

	// Site is the routed-name form of the origin (localhost_8080).
	Site string `json:"-"`
	// Holders is how many documents have the tool under this name.
	Holders int `json:"-"`
	// Active says the call goes to the active tab.
	Active bool `json:"-"`
}
