package hub

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// This file holds what a tool carries beside its name, description, input
// schema and annotations (its outputSchema, icons and _meta), and what a
// result carries beside its content (structuredContent and _meta):
// admission bounds them and drops what a page may not say, and a call's
// result is checked against the tool's outputSchema. An MCP-B page server's
// tools carry all of it; WebMCP tools carry what their page API has.
// docs/decisions/2026-12-03-page-server-meta.md says why it is shaped so.

// Bounds of what a tool and a result carry. A tool over one of them is
// refused (the page's other tools stay); a result's _meta over its bound
// is dropped and logged (the rest of the result stays).
const (
	// MaxToolMetaBytes bounds a tool's _meta, in bytes of JSON.
	MaxToolMetaBytes = 16 << 10
	// MaxIconsBytes bounds a tool's icons, in bytes of JSON.
	MaxIconsBytes = 16 << 10
	// MaxIcons is the most icons kept of a tool; more are dropped.
	MaxIcons = 8
	// MaxResultMetaBytes bounds a result's _meta, in bytes of JSON.
	MaxResultMetaBytes = 64 << 10
)

// ReservedMetaKey reports whether k is a _meta key a page may not set:
// one under webmcp-cdp's own prefix (webmcp-cdp/), or under a prefix MCP
// reserves, in any letter case. MCP (2025-11-25) reserves the prefixes
// whose second dot-separated label is modelcontextprotocol or mcp
// (io.modelcontextprotocol/, dev.mcp/, com.mcp.tools/, but not
// com.example.mcp/); its earlier wording, such a label followed by another
// (modelcontextprotocol.io/, tools.mcp.com/), is honoured too. Clients read
// such keys as said by MCP or by webmcp-cdp, never by a page.
func ReservedMetaKey(k string) bool {
	prefix, _, ok := strings.Cut(k, "/")
	if !ok {
		return false
	}
	prefix = strings.ToLower(prefix)
	if prefix+"/" == metaPrefix {
		return true
	}
	labels := strings.Split(prefix, ".")
	if len(labels) < 2 {
		return false
	}
	mcp := func(l string) bool { return l == "modelcontextprotocol" || l == "mcp" }
	return mcp(labels[1]) || slices.ContainsFunc(labels[:len(labels)-1], mcp)
}

// StripReservedMeta deletes from m the keys a page may not set
// (ReservedMetaKey) and returns them, sorted; nil when there were none.
func StripReservedMeta(m map[string]any) []string {
	var dropped []string
	for k := range m {
		if ReservedMetaKey(k) {
			dropped = append(dropped, k)
		}
	}
	for _, k := range dropped {
		delete(m, k)
	}
	slices.Sort(dropped)
	return dropped
}

// checkCarried is the part of checkTool for what a tool carries beside its
// name, description, input schema and annotations: the bounds of its
// outputSchema (the inputSchema's limit), _meta and icons, and their
// shapes. It returns the tool, or the reason code and the words of its
// refusal.
func (l *Limits) checkCarried(t core.Tool) (core.Tool, core.Reason, string) {
	switch {
	case len(t.OutputSchema) > l.SchemaBytes:
		return t, core.ReasonSize, fmt.Sprintf("its outputSchema is %d bytes, over the limit of %d", len(t.OutputSchema), l.SchemaBytes)
	case len(t.Meta) > MaxToolMetaBytes:
		return t, core.ReasonSize, fmt.Sprintf("its _meta is %d bytes, over the limit of %d", len(t.Meta), MaxToolMetaBytes)
	case len(t.Icons) > MaxIconsBytes:
		return t, core.ReasonSize, fmt.Sprintf("its icons are %d bytes, over the limit of %d", len(t.Icons), MaxIconsBytes)
	}
	if len(t.OutputSchema) > 0 {
		// MCP clients refuse a whole tools/list with an outputSchema of
		// another type (the TypeScript SDK does).
		s, reason := namedObjectSchema("outputSchema", t.OutputSchema)
		if reason != "" {
			return t, core.ReasonSchema, reason
		}
		t.OutputSchema = s
	}
	if len(t.Meta) > 0 && !jsonObject(t.Meta) {
		return t, core.ReasonSchema, "its _meta is not a JSON object"
	}
	if len(t.Icons) > 0 && !jsonArray(t.Icons) {
		return t, core.ReasonSchema, "its icons are not a JSON array"
	}
	return t, "", ""
}

// trimCarried drops what an admitted tool may not carry: the _meta keys a
// page may not set (ReservedMetaKey), icons that are not objects whose src
// is an https:, http: or data:image/ URL, and icons past MaxIcons. It
// returns the tool and what it dropped, worded for the log (nil for
// nothing). A _meta or icon list it leaves whole keeps the page's bytes.
func trimCarried(t core.Tool) (core.Tool, []string) {
	var dropped []string
	if len(t.Meta) > 0 {
		var m map[string]json.RawMessage
		if json.Unmarshal(t.Meta, &m) == nil {
			var keys []string
			for k := range m {
				if ReservedMetaKey(k) {
					keys = append(keys, k)
				}
			}
			if len(keys) > 0 {
				slices.Sort(keys)
				for _, k := range keys {
					delete(m, k)
					dropped = append(dropped, fmt.Sprintf("_meta key %q (reserved to MCP or webmcp-cdp)", trunc(k)))
				}
				t.Meta = nil
				if len(m) > 0 {
					t.Meta, _ = json.Marshal(m)
				}
			}
		}
	}
	if len(t.Icons) > 0 {
		var icons []json.RawMessage
		if json.Unmarshal(t.Icons, &icons) == nil {
			kept := icons[:0:0]
			for i, ic := range icons {
				switch why := iconProblem(ic); {
				case why != "":
					dropped = append(dropped, fmt.Sprintf("icon %d (%s)", i, why))
				case len(kept) == MaxIcons:
					dropped = append(dropped, fmt.Sprintf("icon %d (over %d icons)", i, MaxIcons))
				default:
					kept = append(kept, ic)
				}
			}
			if len(kept) != len(icons) {
				t.Icons = nil
				if len(kept) > 0 {
					t.Icons, _ = json.Marshal(kept)
				}
			}
		}
	}
	return t, dropped
}

// iconProblem says what is wrong with one icon, or "".
func iconProblem(raw json.RawMessage) string {
	var ic struct {
		Src      *string  `json:"src"`
		MIMEType string   `json:"mimeType"`
		Sizes    []string `json:"sizes"`
		Theme    string   `json:"theme"`
	}
	if !jsonObject(raw) || json.Unmarshal(raw, &ic) != nil || ic.Src == nil {
		return "not an object with a src (and a mimeType, sizes and theme of MCP's types)"
	}
	u, err := url.Parse(*ic.Src)
	if err != nil {
		return "its src is not a URL"
	}
	switch strings.ToLower(u.Scheme) {
	case "https", "http":
		return ""
	case "data":
		if strings.HasPrefix(strings.ToLower(u.Opaque), "image/") {
			return ""
		}
		return "a data: src that is not an image"
	}
	return "its src is not an https:, http: or data: URL"
}

// sameCarried reports whether two tools carry the same outputSchema, icons,
// _meta and task support (sameTool compares the rest).
func sameCarried(a, b core.Tool) bool {
	return bytes.Equal(a.OutputSchema, b.OutputSchema) && bytes.Equal(a.Icons, b.Icons) && bytes.Equal(a.Meta, b.Meta) && a.TaskSupport == b.TaskSupport
}

// sameDefinition reports whether two tools are the same in everything a
// client sees of them (the userscript that registered it included).
func sameDefinition(a, b core.Tool) bool {
	return sameTool(a, b) && sameCarried(a, b) && a.Userscript == b.Userscript
}

// noteDroppedLocked logs what admission dropped of a page's tool or result,
// naming the page, once per tab, origin, tool and what was dropped.
func (h *Hub) noteDroppedLocked(t *tab, d core.Source, tool, of string, dropped []string) {
	what := strings.Join(dropped, "; ")
	k := "dropped\x00" + of + "\x00" + d.Origin + "\x00" + tool + "\x00" + what
	if t.refused[k] || len(t.refused) >= 256 {
		return
	}
	t.refused[k] = true
	h.logger.Warn("dropped part of a page's "+of+": a page may not hand it over", "tool", tool, "url", d.URL, "origin", d.Origin, "tab", t.n, "dropped", what)
}

// checkOutcome holds a page's result o of the tool of c to what a page may
// say and what the tool promised: the _meta keys a page may not set
// (dropped, given by toOutcome) and a _meta over MaxResultMetaBytes are
// dropped and logged; a tool with an outputSchema must return a
// structuredContent object that fits it, or the call is an error that names
// the page. cut says the result was cut to the result limit.
func (h *Hub) checkOutcome(name string, c candidate, o core.Outcome, dropped []string, cut bool) core.Outcome {
	if len(o.Meta) > 0 {
		if raw, err := json.Marshal(o.Meta); err != nil || len(raw) > MaxResultMetaBytes {
			// (Worded without its size: the log says it once per tool.)
			dropped = append(dropped, fmt.Sprintf("_meta (over the limit of %d bytes of JSON)", MaxResultMetaBytes))
			o.Meta = nil
		}
	}
	if len(dropped) > 0 {
		h.mu.Lock()
		h.noteDroppedLocked(c.tab, c.doc.Source, c.tool, "result", dropped)
		h.mu.Unlock()
	}
	schema := c.doc.tools[c.tool].OutputSchema
	if len(schema) == 0 || o.IsError {
		return o
	}
	switch {
	case cut:
		return errorResult("%s declares an outputSchema, but the result the page %s returned was over the limit of %d bytes, so it has no structuredContent", name, c.doc.URL, h.opts.MaxResultBytes)
	case o.Structured == nil:
		return errorResult("%s declares an outputSchema, but the result the page %s returned has no structuredContent object", name, c.doc.URL)
	}
	if why := h.validator.checkOutput(c.tool, c.doc.URL, schema, o.Structured); why != "" {
		return errorResult("the result the page %s returned for %s does not fit the tool's outputSchema: %s", c.doc.URL, name, why)
	}
	return o
}

// checkOutput validates a result's structured content against a tool's
// outputSchema. It returns "" when it fits (or the schema cannot be used:
// logged once, and the content passes), else where and why it does not.
func (v *validator) checkOutput(tool, url string, schema, structured []byte) string {
	c, _ := v.entry(schema)
	s, err := c.get()
	if err != nil {
		if !c.logged.Swap(true) {
			v.logger.Warn("a tool's outputSchema does not compile; its results are not checked against it",
				"tool", tool, "url", url, "reason", firstLine(err.Error()))
		}
		return ""
	}
	if c.broken.Load() {
		return ""
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(structured))
	if err != nil {
		return "the structuredContent is not JSON: " + err.Error()
	}
	return judge(c, s, inst, func() {
		v.logger.Warn("a tool's outputSchema refers to itself in a loop; its results are not checked against it", "tool", tool, "url", url)
	})
}

// jsonObject reports whether raw is JSON whose value is an object.
func jsonObject(raw []byte) bool {
	t := bytes.TrimLeft(raw, " \t\r\n")
	return len(t) > 0 && t[0] == '{' && json.Valid(raw)
}

// jsonArray reports whether raw is JSON whose value is an array.
func jsonArray(raw []byte) bool {
	t := bytes.TrimLeft(raw, " \t\r\n")
	return len(t) > 0 && t[0] == '[' && json.Valid(raw)
}

// stripDeclMeta drops from a page server's declaration (a resource,
// resource template or prompt, as JSON) the _meta keys a page may not set,
// and returns the declaration and the keys it dropped. A declaration it
// leaves whole keeps the page's bytes.
func stripDeclMeta(raw json.RawMessage) (json.RawMessage, []string) {
	var decl map[string]json.RawMessage
	if json.Unmarshal(raw, &decl) != nil || len(decl["_meta"]) == 0 {
		return raw, nil
	}
	var meta map[string]json.RawMessage
	if json.Unmarshal(decl["_meta"], &meta) != nil {
		return raw, nil
	}
	var dropped []string
	for k := range meta {
		if ReservedMetaKey(k) {
			dropped = append(dropped, k)
		}
	}
	if len(dropped) == 0 {
		return raw, nil
	}
	slices.Sort(dropped)
	for _, k := range dropped {
		delete(meta, k)
	}
	delete(decl, "_meta")
	if len(meta) > 0 {
		decl["_meta"], _ = json.Marshal(meta)
	}
	out, err := json.Marshal(decl)
	if err != nil {
		return raw, nil
	}
	return out, dropped
}

// declDropped words the reserved _meta keys dropped from a declaration.
func declDropped(what, name string, keys []string) string {
	return fmt.Sprintf("%s %q: its _meta keys %s were dropped (reserved to MCP or webmcp-cdp)", what, trunc(name), strings.Join(keys, ", "))
}
