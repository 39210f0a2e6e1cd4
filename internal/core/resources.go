package core

import "encoding/json"

// Resource is a resource an MCP-B page server listed, as it declared it.
type Resource struct {
	// URI is the server's own URI of the resource.
	URI string
	// Name is the server's name of the resource.
	Name string
	// Raw is the whole declaration (an MCP Resource object) as the server
	// sent it, bounded in size by the hub.
	Raw json.RawMessage
}

// ResourceTemplate is a resource template a page server listed.
type ResourceTemplate struct {
	// URITemplate is the server's own RFC 6570 template.
	URITemplate string
	// Name is the server's name of the template.
	Name string
	// Raw is the whole declaration (an MCP ResourceTemplate object).
	Raw json.RawMessage
}

// Prompt is a prompt a page server listed.
type Prompt struct {
	// Name is the server's own name of the prompt.
	Name string
	// Raw is the whole declaration (an MCP Prompt object).
	Raw json.RawMessage
}

// ServerProvenance says where a routed resource or prompt leads: what MCP
// clients find in its _meta["webmcp-cdp/source"].
type ServerProvenance struct {
	// Name is the server's own name (a prompt's) or URI (a resource's).
	Name string `json:"name"`
	// Origin and URL are the document's that hosts the server's client, as
	// the browser reports them.
	Origin string `json:"origin"`
	URL    string `json:"url"`
	// Tab is the number of the tab.
	Tab int `json:"tab"`
	// Backend is always BackendMCPB.
	Backend Backend `json:"backend"`
	// Channel is the server's postMessage channel; Kind is "tab" or
	// "iframe"; FrameOrigin is the iframe's origin for an iframe server.
	Channel     string `json:"channel"`
	Kind        string `json:"kind"`
	FrameOrigin string `json:"frameOrigin,omitempty"`
}
