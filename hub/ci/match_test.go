package ci

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestSubset(t *testing.T) {
	got := map[string]any{"n": 2.0, "s": "x", "ok": true, "nil": nil, "list": []any{1.0, map[string]any{"a": 1.0, "b": 2.0}}, "obj": map[string]any{"k": "v", "extra": 1.0}}
	tests := []struct {
		want string
		diff string // "" when want is a subset
	}{
		{`{}`, ""},
		{`{"n":2,"s":"x","ok":true,"nil":null}`, ""},
		{`{"obj":{"k":"v"}}`, ""},
		{`{"list":[1,{"b":2}]}`, ""},
		{`{"n":3}`, "structuredContent.n is 2, want 3"},
		{`{"missing":1}`, `structuredContent has no "missing"`},
		{`{"s":1}`, `structuredContent.s is "x", want 1`},
		{`{"obj":{"k":"w"}}`, `structuredContent.obj.k is "v", want "w"`},
		{`{"obj":[1]}`, `structuredContent.obj is {"extra":1,"k":"v"}, want an array`},
		{`{"n":{"a":1}}`, "structuredContent.n is 2, want an object"},
		{`{"list":[1]}`, "structuredContent.list has 2 elements, want 1"},
		{`{"list":[1,{"a":2}]}`, "structuredContent.list[1].a is 1, want 2"},
		{`{"nil":0}`, "structuredContent.nil is null, want 0"},
	}
	for _, tt := range tests {
		var w any
		if err := json.Unmarshal([]byte(tt.want), &w); err != nil {
			t.Fatal(err)
		}
		d := Subset(w, got, "structuredContent")
		if tt.diff == "" && d != "" || tt.diff != "" && !strings.HasPrefix(d, tt.diff) {
			t.Errorf("Subset(%s) = %q, want %q", tt.want, d, tt.diff)
		}
	}
}

func TestCheckResult(t *testing.T) {
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	withSC := text(`{"sum":5}`)
	withSC.StructuredContent = map[string]any{"sum": 5}
	failed := text("boom")
	failed.IsError = true
	str := func(s string) *string { return &s }
	yes, no := true, false
	tests := []struct {
		name string
		res  *mcp.CallToolResult
		want Expect
		diff string
	}{
		{"nothing expected", text("x"), Expect{}, ""},
		{"exact text", text("hello"), Expect{Text: str("hello")}, ""},
		{"wrong text", text("hello"), Expect{Text: str("bye")}, `text is "hello", want "bye"`},
		{"contains", text("one two"), Expect{Contains: Strings{"one", "two"}}, ""},
		{"lacks", text("one two"), Expect{Contains: Strings{"one", "three"}}, `text lacks "three"`},
		{"unexpected error", failed, Expect{}, "the call failed: boom"},
		{"expected error", failed, Expect{IsError: &yes, Contains: Strings{"boom"}}, ""},
		{"isError false given", text("x"), Expect{IsError: &no}, ""},
		{"expected error, got success", text("x"), Expect{IsError: &yes}, "the call succeeded, but isError: true was expected"},
		{"structured", withSC, Expect{Structured: json.RawMessage(`{"sum":5}`)}, ""},
		{"structured differs", withSC, Expect{Structured: json.RawMessage(`{"sum":6}`)}, "structuredContent.sum is 5, want 6"},
		{"no structured", text("5"), Expect{Structured: json.RawMessage(`{"sum":5}`)}, "text is 5, want an object"},
		{"structured from JSON text", text(`{"sum":5,"x":1}`), Expect{Structured: json.RawMessage(`{"sum":5}`)}, ""},
		{"structured, text not JSON", text("five"), Expect{Structured: json.RawMessage(`{"sum":5}`)}, `the result has no structuredContent, and its text is not JSON: invalid character 'i' in literal false (expecting 'a') (text "five")`},
		{"json path", text(`{"items":[{"name":"a"}]}`), Expect{JSON: json.RawMessage(`{"$.items[0].name":"a"}`)}, ""},
		{"json differs", text(`{"items":[{"name":"a"}]}`), Expect{JSON: json.RawMessage(`{"$.items[0].name":"b"}`)}, `json $.items[0].name is "a", want "b"`},
		{"json of text that is not JSON", text("hi"), Expect{JSON: json.RawMessage(`{"a":1}`)}, `json: the result's text is not JSON: invalid character 'h' looking for beginning of value (text "hi")`},
		{"matches", text("order 42 shipped"), Expect{Matches: Patterns{Text: Strings{`^order \d+`, "shipped$"}}}, ""},
		{"does not match", text("order 42"), Expect{Matches: Patterns{Text: Strings{`^\d+$`}}}, `text does not match /^\d+$/`},
		{"several problems", failed, Expect{Text: str("ok")}, `the call failed: boom; text is "boom", want "ok"`},
	}
	for _, tt := range tests {
		if got := CheckResult(tt.res, tt.want); got != tt.diff {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.diff)
		}
	}
}
