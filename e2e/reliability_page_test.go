package e2e

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestReliabilityHostileBuiltins (issue 15, point 8): a page that, after the
// page script loaded, replaces the built-ins the script could call
// (Array.prototype.push, the array iterator, Map/Set/Promise methods, JSON,
// Object.keys, String.prototype.startsWith, Function.prototype.call/apply/bind
// and more; fixtures/hostile/builtins.js) with functions that throw or lie,
// and then registers tools through every face of the page API. Its tools are
// listed and callable with the right results, the two it removed stay
// removed, and a second, well-behaved tab is unaffected. It runs on the
// polyfill and on native WebMCP (where the page script layers the older faces
// on Chromium's document.modelContext).
func TestReliabilityHostileBuiltins(t *testing.T) {
	t.Parallel()
	for _, be := range conformanceBackends {
		t.Run(be.name, func(t *testing.T) { hostileBuiltins(t, be.name, be.args) })
	}
}

// hostileBuiltins is TestReliabilityHostileBuiltins on one backend, started
// with args.
func hostileBuiltins(t *testing.T, backend string, args []string) {
	base := serveFixtures(t)
	c := start(t, append(append([]string{"launch", "--headless"}, args...), base+"/hostile/builtins.html", base+"/current/")...)

	want := []string{"b_add", "b_echo", "b_events", "b_form", "b_gettools", "b_json", "b_legacy_a", "b_legacy_b", "b_reg", "b_win"}
	// The page's tools and the other tab's echo; a failing page never gets
	// there, so the wait ends with a count rather than at the first miss.
	var tools map[string]*mcp.Tool
	// otherTab names the well-behaved tab's tool (its site is the same, so
	// "echo" must not match the page's "b_echo").
	otherTab := func(n string) []string {
		var out []string
		for _, name := range toolWithSuffix(tools, n) {
			if !strings.HasSuffix(name, "_b_"+n) {
				out = append(out, name)
			}
		}
		return out
	}
	listed := 0
	deadline := time.Now().Add(20 * time.Second)
	for {
		tools = c.tools()
		listed = 0
		for _, n := range want {
			if len(toolWithSuffix(tools, n)) == 1 {
				listed++
			}
		}
		if (listed == len(want) && len(otherTab("echo")) == 1 && len(otherTab("add")) == 1) || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond) // poll interval: as in client.waitFor, no list_changed is sure to come
	}
	if listed != len(want) {
		t.Errorf("%d of %d tools of the page that replaced built-ins are listed; tools: %v", listed, len(want), names(tools))
	}
	for _, n := range toolWithSuffix(tools, "b_echo") {
		if src := source(t, tools[n]); src["backend"] != backend {
			t.Errorf("%s came from backend %v, want %s", n, src["backend"], backend)
		}
	}

	// Each tool with its arguments and the result it must give: a string, or
	// a JSON value (compared as JSON).
	asJSON := func(s string) any {
		var v any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			return fmt.Sprintf("not JSON: %q", s)
		}
		return v
	}
	cases := []struct {
		tool string
		args map[string]any
		text string // exact text, or
		json string // the JSON value
	}{
		{tool: "b_echo", args: map[string]any{"text": "hi"}, text: "echo: hi"},
		{tool: "b_add", args: map[string]any{"a": 2, "b": 3}, json: `{"sum":5}`},
		{tool: "b_json", args: map[string]any{}, json: `{"list":[1,"two",{"three":3}],"ok":true}`},
		{tool: "b_events", args: map[string]any{}, text: "activated: b_events"},
		{tool: "b_legacy_a", args: map[string]any{"text": "abc"}, text: "cba"},
		{tool: "b_legacy_b", args: map[string]any{}, text: "interacted: yes"},
		{tool: "b_reg", args: map[string]any{"n": 21}, json: `{"doubled":42}`},
		{tool: "b_win", args: map[string]any{"who": "you"}, text: "hello, you"},
		{tool: "b_form", args: map[string]any{"who": "Ada"}, text: "form says hello, Ada"},
		{tool: "b_gettools", args: map[string]any{}, text: strings.Join(want, ",") + " | replaced: "},
	}
	right := 0
	replaced := 0
	for _, tc := range cases {
		ns := toolWithSuffix(tools, tc.tool)
		if len(ns) != 1 {
			continue // counted above
		}
		res := c.call(ns[0], tc.args)
		got := text(res)
		switch {
		case res.IsError:
			t.Errorf("%s: isError: %s", tc.tool, got)
		case tc.tool == "b_gettools":
			// "names | replaced: N | errors: 0"
			if !strings.HasPrefix(got, tc.text) || !strings.HasSuffix(got, " | errors: 0") {
				t.Errorf("b_gettools = %q, want %q…%q", got, tc.text, " | errors: 0")
				continue
			}
			fmt.Sscanf(strings.TrimPrefix(got, tc.text), "%d", &replaced)
			right++
		case tc.json != "":
			if !reflect.DeepEqual(asJSON(got), asJSON(tc.json)) {
				t.Errorf("%s = %q, want %s", tc.tool, got, tc.json)
				continue
			}
			right++
		default:
			if got != tc.text {
				t.Errorf("%s = %q, want %q", tc.tool, got, tc.text)
				continue
			}
			right++
		}
	}
	// The form's schema was synthesized with the page's String methods
	// replaced: on the polyfill the parameter's description is still cleaned
	// up. Native Chromium synthesizes it itself, out of the page's reach, and
	// (156) keeps the attribute's white space, so there only the words count.
	schemaOK := false
	if ns := toolWithSuffix(tools, "b_form"); len(ns) == 1 {
		b, _ := json.Marshal(tools[ns[0]].InputSchema)
		var schema struct {
			Properties struct {
				Who struct {
					Description string `json:"description"`
				} `json:"who"`
			} `json:"properties"`
		}
		json.Unmarshal(b, &schema)
		desc := schema.Properties.Who.Description
		if backend == "native" {
			desc = strings.Join(strings.Fields(desc), " ")
		}
		schemaOK = desc == "Who to greet"
		if !schemaOK {
			t.Errorf("b_form's inputSchema is %s, want the parameter who described as \"Who to greet\"", b)
		}
	}
	if replaced < 13 {
		t.Errorf("the page reports %d built-ins replaced, want at least 13", replaced)
	}
	t.Logf("RELIABILITY | %s | %s | %s", fmt.Sprintf("%s: page replaced Array.prototype.push and %d other built-ins after the page script loaded, then registered through every face of the API", backend, max(replaced-1, 0)),
		fmt.Sprintf("%d of %d tools listed, %d of %d called with the right result", listed, len(want), right, len(want)),
		verdict(listed == len(want) && right == len(want) && schemaOK && replaced >= 13))

	// What the page removed stays removed.
	gone := 0
	for _, n := range []string{"b_gone", "b_temp"} {
		if len(toolWithSuffix(tools, n)) != 0 {
			gone++
			t.Errorf("%s is listed, but the page removed it (aborted signal / unregister())", n)
		}
	}
	t.Logf("RELIABILITY | %s | %s | %s", backend+": the same page removed 2 tools (aborted signal, unregister())",
		fmt.Sprintf("%d of 2 listed", gone), verdict(listed == len(want) && gone == 0))

	// The other tab.
	calm := 0
	if ns := otherTab("echo"); len(ns) == 1 {
		if got := c.callOK(ns[0], map[string]any{"text": "calm"}); got == "calm" {
			calm++
		} else {
			t.Errorf("echo on the well-behaved tab = %q", got)
		}
	} else {
		t.Errorf("the well-behaved tab's echo is not listed once: %v", ns)
	}
	if ns := otherTab("add"); len(ns) == 1 {
		if got := c.callOK(ns[0], map[string]any{"a": 40, "b": 2}); reflect.DeepEqual(asJSON(got), asJSON(`{"sum":42}`)) {
			calm++
		} else {
			t.Errorf("add on the well-behaved tab = %q", got)
		}
	} else {
		t.Errorf("the well-behaved tab's add is not listed once: %v", ns)
	}
	t.Logf("RELIABILITY | %s | %s | %s", backend+": a well-behaved tab next to the page that replaced built-ins",
		fmt.Sprintf("%d of 2 calls right", calm), verdict(calm == 2))
}

// verdict is the last column of a RELIABILITY line.
func verdict(ok bool) string {
	if ok {
		return "pass"
	}
	return "FAIL"
}
