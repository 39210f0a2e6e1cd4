package ci

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// The backends of a tool, as CI mode reports them.
const (
	// BackendWebMCP is a tool a document registered through the WebMCP API
	// (document.modelContext, the older navigator.modelContext, or a
	// <form toolname>), polyfilled or native.
	BackendWebMCP = "webmcp"
	// BackendMCPB is a tool of an MCP-B page server (an MCP server running
	// in the page, reached over postMessage).
	BackendMCPB = string(core.BackendMCPB)
)

// backendOf names the backend of a served tool.
func backendOf(b core.Backend) string {
	if b == core.BackendMCPB {
		return BackendMCPB
	}
	return BackendWebMCP
}

// Resource is a resource, or a resource template, of one of the page's
// MCP-B page servers.
type Resource struct {
	// URI is the server's own URI (or URI template) of the resource.
	URI string `json:"uri"`
	// Routed is the URI (or template) MCP clients see.
	Routed string `json:"routed"`
	// Template says the URI is an RFC 6570 template.
	Template bool `json:"template,omitempty"`
	// Name, Title, Description and MimeType are the server's.
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MimeType    string `json:"mimeType,omitempty"`
	// URL is the document whose page server lists it.
	URL string `json:"url,omitempty"`
}

// Prompt is a prompt of one of the page's MCP-B page servers.
type Prompt struct {
	// Name is the server's own name of the prompt.
	Name string `json:"name"`
	// Routed is the name MCP clients see.
	Routed string `json:"routed"`
	// Title and Description are the server's.
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// Arguments are the prompt's arguments.
	Arguments []PromptArgument `json:"arguments,omitempty"`
	// URL is the document whose page server lists it.
	URL string `json:"url,omitempty"`
}

// PromptArgument is one argument of a Prompt.
type PromptArgument struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// serverDecl is the part of a resource, template or prompt declaration CI
// mode reports.
type serverDecl struct {
	Title       string           `json:"title"`
	Description string           `json:"description"`
	MimeType    string           `json:"mimeType"`
	Arguments   []PromptArgument `json:"arguments"`
}

func readDecl(raw json.RawMessage) serverDecl {
	var d serverDecl
	json.Unmarshal(raw, &d) // the hub bounded it; a field of the wrong kind is left out
	return d
}

// tabCatalog picks the resources, templates and prompts of tab n out of the
// page servers' catalog, resources before templates, each sorted by routed
// name.
func tabCatalog(h *hub.Hub, n int) ([]Resource, []Prompt) {
	rs, ts, ps := h.ServerCatalog()
	var res []Resource
	var prompts []Prompt
	for _, r := range rs {
		if r.Source.Tab == n {
			d := readDecl(r.Resource.Raw)
			res = append(res, Resource{URI: r.Resource.URI, Routed: r.URI, Name: r.Resource.Name, Title: d.Title,
				Description: d.Description, MimeType: d.MimeType, URL: r.Source.URL})
		}
	}
	for _, t := range ts {
		if t.Source.Tab == n {
			d := readDecl(t.Template.Raw)
			res = append(res, Resource{URI: t.Template.URITemplate, Routed: t.URITemplate, Template: true, Name: t.Template.Name,
				Title: d.Title, Description: d.Description, MimeType: d.MimeType, URL: t.Source.URL})
		}
	}
	for _, p := range ps {
		if p.Source.Tab == n {
			d := readDecl(p.Prompt.Raw)
			prompts = append(prompts, Prompt{Name: p.Prompt.Name, Routed: p.Name, Title: d.Title, Description: d.Description,
				Arguments: d.Arguments, URL: p.Source.URL})
		}
	}
	sort.SliceStable(res, func(i, j int) bool { return !res[i].Template && res[j].Template })
	return res, prompts
}

// PageCounts says how many tools the page has and, when its MCP-B page
// servers list any, how many resources, resource templates and prompts:
// "3 tools, 1 resource, 1 resource template, 1 prompt".
func PageCounts(p *Page) string {
	templates := 0
	for _, r := range p.Resources {
		if r.Template {
			templates++
		}
	}
	parts := []string{Plural(len(p.Tools), "tool")}
	if n := len(p.Resources) - templates; n > 0 {
		parts = append(parts, Plural(n, "resource"))
	}
	if templates > 0 {
		parts = append(parts, Plural(templates, "resource template"))
	}
	if len(p.Prompts) > 0 {
		parts = append(parts, Plural(len(p.Prompts), "prompt"))
	}
	return strings.Join(parts, ", ")
}

// servedNames lists the page's served tools for the load case's note, a
// page server's marked "(mcp-b)", and its page servers' resources and
// prompts.
func servedNames(p *Page) string {
	var names []string
	for _, t := range p.Tools {
		if t.Refused != "" {
			continue
		}
		if t.Backend == BackendMCPB {
			names = append(names, t.Name+" (mcp-b)")
		} else {
			names = append(names, t.Name)
		}
	}
	var extra []string
	for _, r := range p.Resources {
		extra = append(extra, r.Routed)
	}
	for _, pr := range p.Prompts {
		extra = append(extra, "prompt "+pr.Routed)
	}
	s := strings.Join(names, ", ")
	if len(extra) > 0 {
		s += fmt.Sprintf("; page servers list %s", strings.Join(extra, ", "))
	}
	return s
}
