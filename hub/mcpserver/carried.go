package mcpserver

import (
	"encoding/json"
	"log/slog"
	"maps"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// This file carries what a page's tool says beside its name, description,
// input schema and annotations (its outputSchema, icons and _meta) between
// MCP's types and the hub's: from a page server's tools/list into a
// core.Tool, and from a routed tool into the tools/list a client reads. The
// hub bounds them and drops the _meta keys a page may not set
// (hub/pagemeta.go); here they are only translated.

// carriedFrom copies a page server's tool's outputSchema, icons and _meta
// into out, as JSON.
func carriedFrom(out *core.Tool, t *mcp.Tool) {
	if t.OutputSchema != nil {
		if raw, err := json.Marshal(t.OutputSchema); err == nil && string(raw) != "null" {
			out.OutputSchema = raw
		}
	}
	if len(t.Icons) > 0 {
		out.Icons, _ = json.Marshal(t.Icons)
	}
	if len(t.Meta) > 0 {
		out.Meta, _ = json.Marshal(t.Meta)
	}
}

// carryTo puts the outputSchema, icons and _meta of tl into the MCP tool t,
// whose _meta already holds webmcp-cdp's own keys (a page's never clash
// with them: the hub drops a page's keys under webmcp-cdp/). Icons or a
// _meta that do not decode (the hub admitted neither so) are left out and
// logged.
func carryTo(t *mcp.Tool, tl core.Tool, logger *slog.Logger) {
	if len(tl.OutputSchema) > 0 {
		t.OutputSchema = tl.OutputSchema
	}
	if len(tl.Icons) > 0 {
		if err := json.Unmarshal(tl.Icons, &t.Icons); err != nil {
			t.Icons = nil
			logger.Warn("a page tool's icons do not decode; listing it without them", "name", t.Name, "err", err)
		}
	}
	if len(tl.Meta) > 0 {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(tl.Meta, &m); err != nil {
			logger.Warn("a page tool's _meta does not decode; listing it without it", "name", t.Name, "err", err)
			return
		}
		if t.Meta == nil {
			t.Meta = mcp.Meta{}
		}
		for k, v := range m {
			if _, ours := t.Meta[k]; !ours {
				t.Meta[k] = v
			}
		}
	}
}

// stripPageMeta drops from a page server's answer's _meta the keys a page
// may not set (hub.ReservedMetaKey) and logs them with the page: what is
// left of m, nil when nothing is.
func stripPageMeta(m mcp.Meta, what string, p *pageSession, logger *slog.Logger) mcp.Meta {
	if len(m) == 0 {
		return m
	}
	m = maps.Clone(m)
	if dropped := hub.StripReservedMeta(m); len(dropped) > 0 {
		logger.Warn("dropped _meta keys a page may not set (reserved to MCP or webmcp-cdp)", "of", what,
			"url", p.src.URL, "origin", p.src.Origin, "keys", strings.Join(dropped, ", "))
	}
	if len(m) == 0 {
		return nil
	}
	return m
}
