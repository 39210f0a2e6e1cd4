package mcpserver

import (
	"bytes"
	"encoding/json"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file renders the fast path's most common answer, one text block,
// without encoding/json's reflection: the text is spliced into a template
// that encoding/json itself rendered once, around a sentinel, for each of
// the four shapes (error or not, with the server's identity in _meta or
// not). Any other result is marshaled as before. TestFastPathAnswersAsTheSDK
// compares the bytes with the SDK's; TestAppendJSONString compares the
// escaping with encoding/json's.

// textSentinel stands for the text in a template; encoding/json leaves it
// as it is.
const textSentinel = "WEBMCPCDPTEXTSENTINEL"

// textTemplate is one shape of a one-text-block result: the JSON up to the
// text's quoted value, and after it.
type textTemplate struct{ head, tail []byte }

// textTemplates holds the four shapes, rendered on first use.
type textTemplates struct {
	once  sync.Once
	shape [4]textTemplate // index: isError | serverInfo<<1
	ok    bool
}

// render returns the result's JSON when it is one plain text block (no
// annotations, _meta, or structured content), else nil.
func (tt *textTemplates) render(res *mcp.CallToolResult, serverInfo bool, version string) []byte {
	if len(res.Content) != 1 || res.StructuredContent != nil || res.Meta != nil {
		return nil
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok || tc.Meta != nil || tc.Annotations != nil {
		return nil
	}
	tt.once.Do(func() { tt.ok = tt.build(version) })
	if !tt.ok {
		return nil
	}
	i := 0
	if res.IsError {
		i |= 1
	}
	if serverInfo {
		i |= 2
	}
	t := tt.shape[i]
	b := make([]byte, 0, len(t.head)+len(tc.Text)+len(tc.Text)/8+2+len(t.tail))
	b = append(b, t.head...)
	b = appendJSONString(b, tc.Text)
	return append(b, t.tail...)
}

// build renders the four templates with encoding/json, as resultLine
// marshals a result; false if the sentinel does not come out once, intact
// (the fast path then marshals every result).
func (tt *textTemplates) build(version string) bool {
	for i := range tt.shape {
		res := &mcp.CallToolResult{IsError: i&1 != 0, Content: []mcp.Content{&mcp.TextContent{Text: textSentinel}}}
		if i&2 != 0 {
			res.Meta = mcp.Meta{mcp.MetaKeyServerInfo: &mcp.Implementation{Name: serverName, Version: version}}
		}
		body, err := json.Marshal(res)
		quoted := []byte(`"` + textSentinel + `"`)
		if err != nil || bytes.Count(body, quoted) != 1 {
			return false
		}
		head, tail, _ := bytes.Cut(body, quoted)
		tt.shape[i] = textTemplate{head: head, tail: tail}
	}
	return true
}

// appendJSONString appends s as a JSON string exactly as encoding/json's
// Marshal writes it: <, > and & as \u003c, \u003e and \u0026, U+2028 and
// U+2029 escaped, other control characters as \n, \r, \t, \b, \f or \u00XX,
// and each byte of invalid UTF-8 as \ufffd.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
