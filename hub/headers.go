package hub

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// MCP 2026-07-28 lets a tool mark primitive input properties with
// "x-mcp-header": NAME, and clients then mirror those arguments in an
// Mcp-Param-NAME header of each call. A client that meets an annotation
// breaking the spec's rules may drop the tool or reject the whole list, so
// a page's tool with such an annotation is refused here, with the reason,
// and the page's other tools are listed as usual.

// xMCPHeader is the schema keyword.
const xMCPHeader = "x-mcp-header"

// maxHeaderDepth bounds how deep headerAnnotations follows nested
// properties (the schema is bounded in size, this in nesting).
const maxHeaderDepth = 32

// ParamHeader is one x-mcp-header annotation of a tool's input: the
// argument at Path (property names from the top) is mirrored in the
// header Mcp-Param-Name of each call.
type ParamHeader struct {
	Path []string
	Name string
}

// ParamHeaders returns the x-mcp-header annotations of an input schema
// (none, without reading it, when the schema does not have the word), or
// why they break MCP's rules: each is a non-empty HTTP token, on a property
// of type string, integer or boolean, and no two name the same header
// (case-insensitively).
func ParamHeaders(schema json.RawMessage) ([]ParamHeader, string) {
	if !bytes.Contains(schema, []byte(xMCPHeader)) {
		return nil, ""
	}
	var root headerSchema
	if err := json.Unmarshal(schema, &root); err != nil {
		return nil, "its inputSchema cannot be read for x-mcp-header: " + err.Error()
	}
	var out []ParamHeader
	why := walkHeaders(root.Properties, nil, map[string]bool{}, &out)
	return out, why
}

// checkHeaderAnnotations is ParamHeaders' verdict alone.
func checkHeaderAnnotations(schema json.RawMessage) string {
	_, why := ParamHeaders(schema)
	return why
}

// headerSchema is the part of a schema x-mcp-header rules look at.
type headerSchema struct {
	Type       any                     `json:"type"`
	Header     json.RawMessage         `json:"x-mcp-header"`
	Properties map[string]headerSchema `json:"properties"`
}

func walkHeaders(props map[string]headerSchema, prefix []string, seen map[string]bool, out *[]ParamHeader) string {
	if len(prefix) > maxHeaderDepth {
		return fmt.Sprintf("its inputSchema nests properties more than %d deep", maxHeaderDepth)
	}
	for name, p := range props {
		path := append(slices.Clip(prefix), name)
		if p.Header != nil {
			h, why := checkHeaderAnnotation(p, seen)
			if why != "" {
				return fmt.Sprintf("its input property %q has an x-mcp-header that MCP clients reject: %s (fix the annotation or remove it)", strings.Join(path, "."), why)
			}
			*out = append(*out, ParamHeader{Path: path, Name: h})
		}
		if why := walkHeaders(p.Properties, path, seen, out); why != "" {
			return why
		}
	}
	return ""
}

func checkHeaderAnnotation(p headerSchema, seen map[string]bool) (string, string) {
	var h string
	if json.Unmarshal(p.Header, &h) != nil || h == "" {
		return "", "the value must be a non-empty string"
	}
	if ty, _ := p.Type.(string); ty != "string" && ty != "integer" && ty != "boolean" {
		return "", fmt.Sprintf("it may only mark a string, integer or boolean, not type %v", p.Type)
	}
	for _, c := range h {
		if !isTokenChar(c) {
			return "", fmt.Sprintf("%q has the character %q, which an HTTP header name cannot have", h, c)
		}
	}
	k := strings.ToLower(h)
	if seen[k] {
		return "", fmt.Sprintf("another property already names the header %q", h)
	}
	seen[k] = true
	return h, ""
}

// isTokenChar says whether c may be in an HTTP field name (RFC 9110 tchar).
func isTokenChar(c rune) bool {
	switch {
	case c >= '0' && c <= '9', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		return true
	}
	return strings.ContainsRune("!#$%&'*+-.^_`|~", c)
}
