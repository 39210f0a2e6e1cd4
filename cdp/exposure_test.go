package cdp

import (
	"fmt"
	"testing"
)

// TestRemoteFor checks what one document is pushed of the others of its
// tab: only tools exposed to its origin (CDP's), never a same-origin
// document's (the page script's peers list those), never from or to an
// opaque origin, and at most maxRemoteTools.
func TestRemoteFor(t *testing.T) {
	tab := &targetState{tab: "T"}
	doc := func(key, origin string) *docState {
		return &docState{key: key, t: tab, origin: origin, alive: true, bridge: "b"}
	}
	parent, child, same, opaque := doc("p", "http://127.0.0.1:1"), doc("c", "http://localhost:1"), doc("s", "http://127.0.0.1:1"), doc("o", "null")
	docs := map[string]*docState{"p": parent, "c": child, "s": same, "o": opaque}
	tool := func(name string, to ...string) exposedTool { return exposedTool{Name: name, Description: "d", To: to} }
	exposed := map[string]*xoDoc{
		"p": {tools: []exposedTool{tool("p_to_child", "http://localhost:1"), tool("p_to_third", "https://third.example")}},
		"c": {path: []int{0}, tools: []exposedTool{tool("c_to_parent", "http://127.0.0.1:1"), tool("c_to_null", "null")}},
		"s": {path: []int{1}, tools: []exposedTool{tool("s_to_itself", "http://127.0.0.1:1")}},
		"o": {path: []int{2}, tools: []exposedTool{tool("o_to_parent", "http://127.0.0.1:1")}},
	}
	keys := []string{"c", "o", "p", "s"}
	names := func(es []remoteEntry) string {
		out := ""
		for _, e := range es {
			out += e.Key + "@" + e.Origin + ":"
			for _, t := range e.Tools {
				out += t.Name + ","
				if t.To != nil {
					out += "(to kept)"
				}
			}
			out += ";"
		}
		return out
	}
	for _, tc := range []struct {
		viewer *docState
		want   string
	}{
		{parent, "c@http://localhost:1:c_to_parent,;"},
		{same, "c@http://localhost:1:c_to_parent,;"},
		{child, "p@http://127.0.0.1:1:p_to_child,;"},
		{opaque, ""},
	} {
		if got := names(remoteFor(tc.viewer, keys, docs, exposed)); got != tc.want {
			t.Errorf("pushed to %s: %q, want %q", tc.viewer.key, got, tc.want)
		}
	}
	// The bound.
	many := &xoDoc{}
	for i := 0; i < maxRemoteTools+10; i++ {
		many.tools = append(many.tools, tool(fmt.Sprint("t", i), "http://127.0.0.1:1"))
	}
	got := remoteFor(parent, []string{"c"}, docs, map[string]*xoDoc{"c": many})
	if len(got) != 1 || len(got[0].Tools) != maxRemoteTools {
		t.Errorf("pushed %d tools of %d, want %d", len(got[0].Tools), len(many.tools), maxRemoteTools)
	}
}

// TestRelayRefusal checks when Go refuses to relay a call: a document of
// another tab, of another origin than the caller expects, of the caller's
// own origin, a tool not exposed to the caller's origin (whatever the page
// says it is), a document gone, and a tab whose call slots are taken.
func TestRelayRefusal(t *testing.T) {
	tabA, tabB := &targetState{tab: "A"}, &targetState{tab: "B"}
	caller := &docState{key: "caller", t: tabA, origin: "http://127.0.0.1:1", alive: true, bridge: "b"}
	target := &docState{key: "target", t: tabA, origin: "http://localhost:1", alive: true, bridge: "b"}
	other := &docState{key: "other", t: tabB, origin: "http://localhost:1", alive: true, bridge: "b"}
	sameOrigin := &docState{key: "same", t: tabA, origin: "http://127.0.0.1:1", alive: true, bridge: "b"}
	gone := &docState{key: "gone", t: tabA, origin: "http://localhost:1", bridge: "b"}
	xt := &xoTab{docs: map[string]*xoDoc{
		"target": {tools: []exposedTool{{Name: "ok", To: []string{"http://127.0.0.1:1"}}, {Name: "private", To: []string{"https://third.example"}}}},
		"other":  {tools: []exposedTool{{Name: "ok", To: []string{"http://127.0.0.1:1"}}}},
		"same":   {tools: []exposedTool{{Name: "ok", To: []string{"http://127.0.0.1:1"}}}},
		"gone":   {tools: []exposedTool{{Name: "ok", To: []string{"http://127.0.0.1:1"}}}},
	}}
	full := &xoTab{docs: xt.docs, calls: maxRelayCalls}
	msg := func(key, origin, name string) relayMsg {
		return relayMsg{T: "call", ID: "1", Key: key, Origin: origin, Name: name}
	}
	for _, tc := range []struct {
		name   string
		target *docState
		xt     *xoTab
		m      relayMsg
		want   string
	}{
		{"allowed", target, xt, msg("target", "http://localhost:1", "ok"), ""},
		{"not exposed to the caller", target, xt, msg("target", "http://localhost:1", "private"), "the tool is not exposed to this origin"},
		{"no such tool", target, xt, msg("target", "http://localhost:1", "nope"), "the tool is not exposed to this origin"},
		{"another origin than expected", target, xt, msg("target", "https://evil.example", "ok"), "the tool's document is not of tool.origin"},
		{"another tab", other, xt, msg("other", "http://localhost:1", "ok"), "the tool's document is not of tool.origin"},
		{"the caller's own origin", sameOrigin, xt, msg("same", "http://127.0.0.1:1", "ok"), "the tool's document is not of tool.origin"},
		{"gone", gone, xt, msg("gone", "http://localhost:1", "ok"), "the tool's document went away"},
		{"unknown document", nil, xt, msg("nobody", "http://localhost:1", "ok"), "the tool's document went away"},
		{"slots taken", target, full, msg("target", "http://localhost:1", "ok"), fmt.Sprintf("too many calls between the documents of this tab are in flight (%d)", maxRelayCalls)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := relayRefusal(caller, tc.target, tc.xt, tc.m); got != tc.want {
				t.Errorf("relayRefusal = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestNoteExposureBounds checks what Go keeps of a document's exposed
// tools: at most maxExposedTo origins per tool, none over maxOriginLen, no
// tool with a schema that is not JSON, and no tool exposed to nobody.
func TestNoteExposureBounds(t *testing.T) {
	b := &Browser{docs: map[string]*docState{}}
	b.opts.Limits.defaults()
	tab := &targetState{tab: "T"}
	d := &docState{key: "d", t: tab, origin: "http://127.0.0.1:1", alive: true}
	b.docs["d"] = d
	var many []string
	for i := 0; i < maxExposedTo+5; i++ {
		many = append(many, fmt.Sprintf("https://o%d.example", i))
	}
	long := "https://" + string(make([]byte, maxOriginLen)) + ".example"
	bad := "{not json"
	tools := []exposedTool{
		{Name: "many", To: many},
		{Name: "long", To: []string{long}},
		{Name: "badschema", Schema: &bad, To: []string{"https://a.example"}},
		{Name: "nobody"},
	}
	b.mu.Lock()
	b.noteExposureLocked(d, tools, []int{0})
	xd := b.xo.tabs["T"].docs["d"]
	b.mu.Unlock()
	if len(xd.tools) != 1 || xd.tools[0].Name != "many" || len(xd.tools[0].To) != maxExposedTo {
		t.Errorf("kept %+v, want only the tool many with %d origins", xd.tools, maxExposedTo)
	}
}
