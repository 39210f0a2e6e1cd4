package mcpserver

import (
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestAppendJSONString: the fast path escapes text as encoding/json's
// Marshal does, byte for byte, for the cases it treats apart and for
// random strings of ASCII, control characters, multi-byte runes and
// invalid UTF-8.
func TestAppendJSONString(t *testing.T) {
	cases := []string{"", "plain", `q"b\s`, "<a href='x'>&amp;</a>", "\b\f\n\r\t\x00\x01\x1f\x7f",
		"\u2028\u2029", "é漢字😀", "\xff", "a\xc3", "\xed\xa0\x80", "\ufffd", "tail\xe2\x80"}
	pieces := []string{"a", "Z", " ", `"`, `\`, "<", ">", "&", "\n", "\x00", "\x1b", "\u2028", "\u2029", "é", "😀", "\xff", "\xc3", "\xe2\x80", "\ufffd", "\u007f", "\u0080"}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		var s string
		for range r.IntN(12) {
			s += pieces[r.IntN(len(pieces))]
		}
		cases = append(cases, s)
	}
	for _, s := range cases {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendJSONString(nil, s); string(got) != string(want) {
			t.Errorf("appendJSONString(%q) = %s, want %s", s, got, want)
		}
	}
}

// TestTextTemplates: a one-text-block result renders as encoding/json
// renders it, in all four shapes; any other result is left to it (nil).
func TestTextTemplates(t *testing.T) {
	var tt textTemplates
	for _, isErr := range []bool{false, true} {
		for _, info := range []bool{false, true} {
			res := &mcp.CallToolResult{IsError: isErr, Content: []mcp.Content{&mcp.TextContent{Text: "a<b> \"c\"\n"}}}
			got := tt.render(res, info, "1.2.3")
			if info {
				res.Meta = mcp.Meta{mcp.MetaKeyServerInfo: &mcp.Implementation{Name: serverName, Version: "1.2.3"}}
			}
			want, _ := json.Marshal(res)
			if string(got) != string(want) {
				t.Errorf("error %v, server info %v:\n got %s\nwant %s", isErr, info, got, want)
			}
		}
	}
	for name, res := range map[string]*mcp.CallToolResult{
		"no content":  {},
		"two blocks":  {Content: []mcp.Content{&mcp.TextContent{Text: "a"}, &mcp.TextContent{Text: "b"}}},
		"image":       {Content: []mcp.Content{&mcp.ImageContent{Data: []byte("x"), MIMEType: "image/png"}}},
		"structured":  {Content: []mcp.Content{&mcp.TextContent{Text: "a"}}, StructuredContent: map[string]any{"a": 1}},
		"result meta": {Content: []mcp.Content{&mcp.TextContent{Text: "a"}}, Meta: mcp.Meta{"k": 1}},
		"block meta":  {Content: []mcp.Content{&mcp.TextContent{Text: "a", Meta: mcp.Meta{"k": 1}}}},
		"annotations": {Content: []mcp.Content{&mcp.TextContent{Text: "a", Annotations: &mcp.Annotations{Priority: 1}}}},
	} {
		if got := tt.render(res, false, "1"); got != nil {
			t.Errorf("%s: rendered %s, want it left to encoding/json", name, got)
		}
	}
}
