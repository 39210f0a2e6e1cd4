package hub_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

func TestInputValidation(t *testing.T) {
	const noteSchema = `{"type":"object","properties":{
		"title":{"type":"string","minLength":1},
		"tags":{"type":"array","items":{"type":"string"}},
		"due":{"type":"string","format":"date"},
		"n":{"type":"integer","maximum":10}},
		"required":["title"],"additionalProperties":false}`
	tests := []struct {
		name      string
		schema    string
		args      string
		wantError string // substring of the error; "" when the page must be called
	}{
		{"valid", noteSchema, `{"title":"x","tags":["a"],"n":3}`, ""},
		{"integer given as 3.0", noteSchema, `{"title":"x","n":3.0}`, ""},
		{"format is an annotation in 2020-12", noteSchema, `{"title":"x","due":"not a date"}`, ""},
		{"missing required", noteSchema, `{}`, "at /: missing property 'title'"},
		{"wrong type deep inside", noteSchema, `{"title":"x","tags":["a",5]}`, "at /tags/1: got number, want string"},
		{"too short", noteSchema, `{"title":""}`, "at /title: minLength: got 0, want 1"},
		{"over maximum", noteSchema, `{"title":"x","n":11}`, "at /n: maximum: got 11, want 10"},
		{"unknown property", noteSchema, `{"title":"x","nope":1}`, "additional properties 'nope' not allowed"},
		{"several problems", noteSchema, `{"title":"","n":"x"}`, "; at "},
		{"arguments not an object", noteSchema, `[1,2]`, "the arguments must be a JSON object"},
		{"no schema takes any object", "", `{"anything":true}`, ""},
		{"anyOf", `{"type":"object","anyOf":[{"required":["a"]},{"required":["b"]}]}`, `{}`, "'anyOf' failed"},
		{"local $ref", `{"type":"object","properties":{"p":{"$ref":"#/$defs/pos"}},"$defs":{"pos":{"type":"number","minimum":0}}}`, `{"p":-1}`, "at /p: minimum: got -1, want 0"},
		// Schemas that do not compile are served, and the page is called.
		{"remote $ref is not loaded", `{"type":"object","properties":{"p":{"$ref":"https://example.com/s.json"}}}`, `{"p":1}`, ""},
		{"file $ref is not loaded", `{"type":"object","$ref":"file:///etc/passwd"}`, `{}`, ""},
		{"unknown $schema", `{"$schema":"https://example.com/my-draft","type":"object"}`, `{}`, ""},
		{"regex Go cannot compile", `{"type":"object","properties":{"p":{"type":"string","pattern":"(?=x)"}}}`, `{"p":"x"}`, ""},
		{"bad keyword value", `{"type":"object","required":true}`, `{}`, ""},
		{"reference cycle", `{"type":"object","$ref":"#/$defs/a","$defs":{"a":{"$ref":"#/$defs/a"}}}`, `{}`, ""},
		{"self reference is fine", `{"type":"object","properties":{"child":{"$ref":"#"}}}`, `{"child":{"child":{"child":5}}}`, "at /child/child/child: got number, want object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log logBuffer
			b := &fakeBrowser{}
			h := hub.New(b, hub.Options{Logger: log.logger()})
			tool := core.Tool{Name: "save", Description: "saves"}
			if tt.schema != "" {
				tool.InputSchema = json.RawMessage(tt.schema)
			}
			h.Update(mkDoc("a", "A", origin), []core.Tool{tool}, nil)
			if len(names(h)) != 1 {
				t.Fatalf("the tool is not listed: %q (log: %s)", names(h), log.String())
			}
			r := h.Call(context.Background(), site+"_save", json.RawMessage(tt.args))
			if tt.wantError == "" {
				if r.IsError {
					t.Fatalf("call failed: %s", text(t, r))
				}
				if b.count() != 1 {
					t.Errorf("the page was called %d times, want 1", b.count())
				}
				return
			}
			got := text(t, r)
			if !r.IsError || !strings.Contains(got, tt.wantError) || !strings.Contains(got, "the page was not called") {
				t.Errorf("result %v %q, want an error containing %q", r.IsError, got, tt.wantError)
			}
			if b.count() != 0 {
				t.Errorf("the page was called with invalid arguments")
			}
		})
	}
}

func TestSchemaThatDoesNotCompileIsLogged(t *testing.T) {
	var log logBuffer
	b := &fakeBrowser{}
	h := hub.New(b, hub.Options{Logger: log.logger()})
	h.Update(mkDoc("a", "A", origin), []core.Tool{{Name: "x", Description: "x", InputSchema: json.RawMessage(`{"type":"object","minLength":"five"}`)}}, nil)
	log.waitFor(t, "does not compile")
	if !strings.Contains(log.String(), "tool=x") {
		t.Errorf("the log line does not name the tool: %s", log.String())
	}
	if r := h.Call(context.Background(), site+"_x", json.RawMessage(`{"q":1}`)); r.IsError || b.count() != 1 {
		t.Errorf("a tool whose schema does not compile was not called: %+v", r)
	}
	if n := strings.Count(log.String(), "does not compile"); n != 1 {
		t.Errorf("logged %d times, want once", n)
	}
}
