package mcpserver

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// CallToolResult renders a call's outcome as MCP's result. Text blocks
// become TextContent as they are; other blocks (images, audio, resources)
// are decoded by the SDK from the page's JSON, and a block it cannot decode
// is handed over as its JSON text rather than lost.
func CallToolResult(o core.Outcome) *mcp.CallToolResult {
	res := &mcp.CallToolResult{IsError: o.IsError, Content: make([]mcp.Content, 0, len(o.Content))}
	for _, b := range o.Content {
		if b.Type == "text" || len(b.Raw) == 0 {
			res.Content = append(res.Content, &mcp.TextContent{Text: b.Text})
			continue
		}
		var one mcp.CallToolResult
		if err := json.Unmarshal([]byte(`{"content":[`+string(b.Raw)+`]}`), &one); err != nil || len(one.Content) != 1 {
			res.Content = append(res.Content, &mcp.TextContent{Text: string(b.Raw)})
			continue
		}
		res.Content = append(res.Content, one.Content[0])
	}
	if len(o.Structured) > 0 {
		res.StructuredContent = o.Structured
	}
	if len(o.Meta) > 0 {
		res.Meta = mcp.Meta(o.Meta)
	}
	return res
}

// SourceMetaKey is the tool _meta key that carries a routed tool's
// provenance.
const SourceMetaKey = "webmcp-cdp/source"

// maxTaggedTabs is the most tab numbers a tag lists; a tool in more tabs
// is tagged with their count.
const maxTaggedTabs = 4

// Tag is the short provenance tag the MCP edge puts in front of a routed
// tool's description: "[site · tab N]", "[site · tab N · active]",
// "[site · tab N (2 frames) · goes to the latest]", "[site · tabs 1, 2 ·
// goes to tab 2 (active)]", "[site · 12 tabs · goes to tab 3 (latest)]" or
// "[site · cached]"; with several browsers, "browser NAME · " follows the
// site.
func Tag(p core.Provenance) string {
	var tag strings.Builder
	tag.WriteString("[" + p.Site + " · ")
	if p.Browser != "" {
		tag.WriteString("browser " + p.Browser + " · ")
	}
	switch {
	case p.Cached:
		tag.WriteString("cached")
	case p.Holders <= 1:
		tag.WriteString("tab " + strconv.Itoa(p.Tab))
		if p.Active {
			tag.WriteString(" · active")
		}
	case len(p.Tabs) <= 1:
		tag.WriteString("tab " + strconv.Itoa(p.Tab) + " (" + strconv.Itoa(p.Holders) + " frames) · goes to the latest")
	default:
		if len(p.Tabs) > maxTaggedTabs {
			// The list is in _meta; the description stays short.
			tag.WriteString(strconv.Itoa(len(p.Tabs)) + " tabs")
		} else {
			nums := make([]string, len(p.Tabs))
			for i, n := range p.Tabs {
				nums[i] = strconv.Itoa(n)
			}
			tag.WriteString("tabs " + strings.Join(nums, ", "))
		}
		tag.WriteString(" · goes to tab " + strconv.Itoa(p.Tab))
		if p.Active {
			tag.WriteString(" (active)")
		} else {
			tag.WriteString(" (latest)")
		}
	}
	tag.WriteString("]")
	return tag.String()
}

// described returns the description a client sees: the tag, then the
// page's own description.
func described(rt hub.RoutedTool) string {
	return Tag(rt.Source) + " " + rt.Tool.Description
}
