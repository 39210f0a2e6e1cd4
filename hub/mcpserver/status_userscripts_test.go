package mcpserver

import (
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
	"github.com/webmcp-cdp/webmcp-cdp/internal/userscript"
)

// TestStatusPageUserscripts: the status page lists the userscripts in
// force, each with its file, patterns, run-at and the documents it ran in
// (also one that ran nowhere yet and one that registered no tool), and the
// tools each registered with their tabs; a script no longer loaded whose
// tools are listed is shown with them; the page's own tools are not
// listed there. Without scripts in force and without a script's tool, the
// section is left out.
func TestStatusPageUserscripts(t *testing.T) {
	page := core.Source{Key: "a", Tab: "T1", Origin: "http://127.0.0.1:8080", URL: "http://127.0.0.1:8080/legacy/"}
	tool := func(name, script string) core.Tool {
		return core.Tool{Name: name, Description: "d", InputSchema: []byte(`{"type":"object"}`), Userscript: script}
	}
	orders := userscript.Status{Name: "Legacy <orders>", File: "/srv/orders.user.js", Matches: []string{"http://127.0.0.1:8080/legacy/*"},
		Excludes: []string{"*/admin*"}, RunAt: userscript.DocumentIdle, Ran: 3, Documents: []string{"http://127.0.0.1:8080/legacy/?b", "http://127.0.0.1:8080/legacy/"}}
	idle := userscript.Status{Name: "Nowhere yet", File: "/srv/idle.user.js", Matches: []string{"https://elsewhere.example/*"}, RunAt: userscript.DocumentStart, NoFrames: true}
	tests := []struct {
		name    string
		scripts []userscript.Status // nil: no HTTPOptions.Userscripts
		tools   map[string][]core.Tool
		want    []string // rows or parts of rows, in order
		none    bool     // no section
	}{
		{name: "no scripts, no script's tool", tools: map[string][]core.Tool{"T1": {tool("own", "")}}, none: true},
		{name: "tools of scripts, not told which are in force",
			tools: map[string][]core.Tool{"T1": {tool("own", ""), tool("find_order", "Legacy <orders>"), tool("start", "Legacy orders: start")}, "T2": {tool("find_order", "Legacy <orders>")}},
			want: []string{
				`<tr><td><code>Legacy &lt;orders&gt;</code></td><td></td><td></td><td></td><td class="ran"></td><td><code>127_0_0_1_8080_find_order</code><br><code>127_0_0_1_8080_tab1_find_order</code><br><code>127_0_0_1_8080_tab2_find_order</code><br></td><td>1, 2</td></tr>`,
				`<tr><td><code>Legacy orders: start</code></td><td></td><td></td><td></td><td class="ran"></td><td><code>127_0_0_1_8080_start</code><br></td><td>1</td></tr>`,
			}},
		{name: "scripts in force, one ran nowhere, one removed", scripts: []userscript.Status{orders, idle},
			tools: map[string][]core.Tool{"T1": {tool("own", ""), tool("find_order", "Legacy <orders>"), tool("old_tool", "Removed")}},
			want: []string{
				`<tr><td><code>Legacy &lt;orders&gt;</code></td><td><code>/srv/orders.user.js</code></td><td><code>http://127.0.0.1:8080/legacy/*</code><br><span class="muted">not</span> <code>*/admin*</code><br></td><td>document-idle</td><td class="ran">3 documents<br><code>http://127.0.0.1:8080/legacy/?b</code><br><code>http://127.0.0.1:8080/legacy/</code></td><td><code>127_0_0_1_8080_find_order</code><br></td><td>1</td></tr>`,
				`<tr><td><code>Nowhere yet</code></td><td><code>/srv/idle.user.js</code></td><td><code>https://elsewhere.example/*</code><br></td><td>document-start, top documents only</td><td class="ran"><span class="muted">none yet</span></td><td><span class="muted">none</span></td><td></td></tr>`,
				`<tr><td><code>Removed</code> <span class="muted">(no longer loaded)</span></td><td></td><td></td><td></td><td class="ran"></td><td><code>127_0_0_1_8080_old_tool</code><br></td><td>1</td></tr>`,
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := hub.New(noBrowser{}, hub.Options{Logger: slog.New(slog.DiscardHandler)})
			s := New(t.Context(), h, Options{Version: "test", Logger: slog.New(slog.DiscardHandler)})
			var opts HTTPOptions
			if tt.scripts != nil {
				opts.Userscripts = func(got *Server) []userscript.Status {
					if got != s {
						t.Error("the scripts were asked for another server")
					}
					return tt.scripts
				}
			}
			for _, tab := range []string{"T1", "T2"} {
				h.TabOpened(tab, page.URL, "")
				if tools, ok := tt.tools[tab]; ok {
					src := page
					src.Key, src.Tab = tab, tab
					h.Update(src, tools, nil)
				}
			}
			rec := httptest.NewRecorder()
			newStatusHandler(s, opts, "127.0.0.1:8808").render(rec, httptest.NewRequest("GET", "/", nil))
			body := rec.Body.String()
			if i := strings.Index(body, `id="userscripts"`); (i < 0) != tt.none {
				t.Fatalf("the section is shown: %v, want %v", i >= 0, !tt.none)
			}
			at := 0
			for _, row := range tt.want {
				i := strings.Index(body[at:], row)
				if i < 0 {
					t.Fatalf("the status page lacks, after what came before,\n%s\nin\n%s", row, body[strings.Index(body, `id="userscripts"`):])
				}
				at += i + len(row)
			}
			if tt.want != nil && strings.Contains(body[strings.Index(body, `id="userscripts"`):at], "_own") {
				t.Error("the page's own tool is listed as a userscript's")
			}
		})
	}
}
