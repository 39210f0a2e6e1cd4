package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
)

// This file serves MCP Apps (the io.modelcontextprotocol/ui extension)
// from page servers: the extension is advertised to the clients that
// declare it; a tool's _meta.ui.resourceUri (and the legacy flat
// ui/resourceUri) is rewritten to the routed URI of its own page server's
// resource, or dropped; a tool visible to the app alone is listed only to
// such clients; and a view's call by its server's own tool name reaches
// that server's tool. A client that does not declare the extension lists
// plain tools: no ui keys, no app-only tools.

// AppsExtension is the MCP Apps extension's name in capabilities.extensions.
const AppsExtension = "io.modelcontextprotocol/ui"

// AppMIMEType is the MIME type of an MCP App's view.
const AppMIMEType = hub.ViewMIMEType

// The _meta keys of a tool's view.
const (
	uiKey       = "ui"
	legacyUIKey = "ui/resourceUri"
)

// declaresApps says whether a client's capabilities declare MCP Apps.
func declaresApps(caps *mcp.ClientCapabilities) bool {
	if caps == nil {
		return false
	}
	_, ok := caps.Extensions[AppsExtension]
	return ok
}

// requestCaps returns the client capabilities a request carries: those of
// initialize, else the 2026-07-28 per-request ones in its _meta.
func requestCaps(req mcp.Request) *mcp.ClientCapabilities {
	params := req.GetParams()
	if p, ok := params.(*mcp.InitializeParams); ok {
		return p.Capabilities
	}
	if params == nil {
		return nil
	}
	v, ok := params.GetMeta()[mcp.MetaKeyClientCapabilities]
	if !ok {
		return nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var caps mcp.ClientCapabilities
	if json.Unmarshal(raw, &caps) != nil {
		return nil
	}
	return &caps
}

// advertiseApps is receiving middleware: initialize and server/discover
// answer a client that declares MCP Apps with the extension in the
// server's capabilities.extensions (and no other client).
func advertiseApps(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil || (method != "initialize" && method != "server/discover") || !declaresApps(requestCaps(req)) {
			return res, err
		}
		addExtension(res, AppsExtension, map[string]any{"mimeTypes": []string{AppMIMEType}})
		return res, err
	}
}

// addExtension adds an extension to an initialize or server/discover
// result's capabilities (a copy: the server's own stay as they are).
func addExtension(res mcp.Result, name string, settings map[string]any) {
	var caps **mcp.ServerCapabilities
	switch r := res.(type) {
	case *mcp.InitializeResult:
		caps = &r.Capabilities
	case *mcp.DiscoverResult:
		caps = &r.Capabilities
	default:
		return
	}
	c := &mcp.ServerCapabilities{}
	if *caps != nil {
		cp := **caps
		c = &cp
	}
	c.Extensions = maps.Clone(c.Extensions)
	c.AddExtension(name, settings)
	*caps = c
}

// appForms renders the two listings of a tool whose _meta says how it is
// shown in an MCP App: app, for a client that declares MCP Apps, with its
// view's URI routed (or dropped, and logged with the page); plain, for
// any other client, without the ui keys. appOnly is set for a tool the
// model must not see (_meta.ui.visibility without "model"). A tool
// without ui keys gets plain alone (app nil). views is what the view URIs
// resolved to, to tell when the tool must be rendered again.
func (s *Server) appForms(rt hub.RoutedTool, t *mcp.Tool) (plain, app json.RawMessage, appOnly bool, views string, err error) {
	_, hasUI := t.Meta[uiKey]
	_, hasLegacy := t.Meta[legacyUIKey]
	if !hasUI && !hasLegacy {
		plain, err = RenderTool(t)
		return plain, nil, false, "", err
	}
	pageMeta := t.Meta
	appMeta := maps.Clone(pageMeta)
	if hasUI {
		var ui map[string]json.RawMessage
		if json.Unmarshal(asRaw(pageMeta[uiKey]), &ui) != nil || ui == nil {
			s.logger.Warn("dropped a page tool's _meta.ui: not an object", "name", rt.Name, "url", rt.Source.URL)
			delete(appMeta, uiKey)
		} else {
			ui = maps.Clone(ui)
			if raw, ok := ui["resourceUri"]; ok {
				routed := s.routeView(rt, raw, "_meta.ui.resourceUri")
				views += routed
				if routed == "" {
					delete(ui, "resourceUri")
				} else {
					ui["resourceUri"], _ = json.Marshal(routed)
				}
			}
			var vis []string
			if raw, ok := ui["visibility"]; ok && json.Unmarshal(raw, &vis) == nil {
				appOnly = !slices.Contains(vis, "model")
			}
			appMeta[uiKey] = ui
		}
	}
	if hasLegacy {
		routed := s.routeView(rt, asRaw(pageMeta[legacyUIKey]), "_meta[\"ui/resourceUri\"]")
		views += "\x00" + routed
		if routed == "" {
			delete(appMeta, legacyUIKey)
		} else {
			appMeta[legacyUIKey] = routed
		}
	}
	plainMeta := maps.Clone(pageMeta)
	delete(plainMeta, uiKey)
	delete(plainMeta, legacyUIKey)
	t.Meta = plainMeta
	plain, err = RenderTool(t)
	if err == nil {
		t.Meta = appMeta
		app, err = RenderTool(t)
	}
	t.Meta = pageMeta
	return plain, app, appOnly, views, err
}

// routeView returns the routed URI of a tool's view, given as the JSON raw,
// or "" (logged with the page and the reason) for one that is not a ui://
// URI or that names no resource of the tool's own page server.
func (s *Server) routeView(rt hub.RoutedTool, raw json.RawMessage, where string) string {
	var uri string
	if json.Unmarshal(raw, &uri) != nil || !strings.HasPrefix(strings.ToLower(uri), "ui://") {
		s.logger.Warn("dropped a page tool's view: its resourceUri is not a ui:// URI", "name", rt.Name, "key", where,
			"uri", truncate(string(raw)), "url", rt.Source.URL, "origin", rt.Source.Origin)
		return ""
	}
	routed, err := s.hub.ViewResource(rt.Name, uri)
	if err != nil {
		s.logger.Warn("dropped a page tool's view", "name", rt.Name, "key", where, "url", rt.Source.URL, "origin", rt.Source.Origin, "err", err)
		return ""
	}
	return routed
}

// viewsOf resolves the view URIs of a listed tool again, as appForms did,
// without logging: the routed URIs, to compare with the last rendering's.
func (s *Server) viewsOf(rt hub.RoutedTool) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(rt.Tool.Meta, &m) != nil {
		return ""
	}
	resolve := func(raw json.RawMessage) string {
		var uri string
		if json.Unmarshal(raw, &uri) != nil || !strings.HasPrefix(strings.ToLower(uri), "ui://") {
			return ""
		}
		routed, _ := s.hub.ViewResource(rt.Name, uri)
		return routed
	}
	var views string
	if raw, ok := m[uiKey]; ok {
		var ui map[string]json.RawMessage
		if json.Unmarshal(raw, &ui) == nil && ui != nil {
			if u, ok := ui["resourceUri"]; ok {
				views += resolve(u)
			}
		}
	}
	if raw, ok := m[legacyUIKey]; ok {
		views += "\x00" + resolve(raw)
	}
	return views
}

// ownNameCall is the handler of a tools/call whose name is no routed
// tool's: from a client that declares MCP Apps, a page server's own tool
// name (as a view calls it) reaches that tool when one page server alone
// has it; when several have, the result is an error listing the routed
// names. Any other call goes on as an unknown name (fallback).
func (s *Server) ownNameCall(name string, fallback mcp.ToolHandler) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if _, ok := s.hub.Tool(name); ok || !declaresApps(req.ClientCapabilities()) {
			return fallback(ctx, req)
		}
		routed, err := s.hub.OwnToolName(name)
		if errors.Is(err, hub.ErrNoOwnTool) {
			return fallback(ctx, req)
		}
		if err != nil {
			res := &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}
			return res, nil
		}
		s.logger.Debug("a call by a page server's own tool name", "name", name, "routed", routed)
		return s.callHandler(routed)(ctx, req)
	}
}

// PlainTool returns t as a client that does not declare MCP Apps lists it
// (a copy without the ui keys in its _meta, t itself when it has none),
// and whether such a client does not list it at all (an app-only tool).
// The relay lists plain tools: it serves no resources, so no view.
func PlainTool(t *mcp.Tool) (*mcp.Tool, bool) {
	_, hasUI := t.Meta[uiKey]
	_, hasLegacy := t.Meta[legacyUIKey]
	if !hasUI && !hasLegacy {
		return t, false
	}
	only := appOnly(asRaw(mcp.Meta{uiKey: t.Meta[uiKey]}))
	cp := *t
	cp.Meta = maps.Clone(t.Meta)
	delete(cp.Meta, uiKey)
	delete(cp.Meta, legacyUIKey)
	return &cp, only
}

// appOnly says whether a page's tool _meta makes the tool visible to
// views alone (_meta.ui.visibility without "model").
func appOnly(meta json.RawMessage) bool {
	if !strings.Contains(string(meta), "visibility") {
		return false
	}
	var m struct {
		UI struct {
			Visibility *[]string `json:"visibility"`
		} `json:"ui"`
	}
	if json.Unmarshal(meta, &m) != nil || m.UI.Visibility == nil {
		return false
	}
	return !slices.Contains(*m.UI.Visibility, "model")
}

// asRaw returns a _meta value as JSON.
func asRaw(v any) json.RawMessage {
	if raw, ok := v.(json.RawMessage); ok {
		return raw
	}
	raw, _ := json.Marshal(v)
	return raw
}

// truncate cuts a text for a log line.
func truncate(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}
