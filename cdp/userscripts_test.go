package cdp

import (
	"log/slog"
	"os/exec"
	"strings"
	"testing"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"

	"github.com/webmcp-cdp/webmcp-cdp/internal/userscript"
	"github.com/webmcp-cdp/webmcp-cdp/polyfill"
)

func testUserscript(t *testing.T, lines ...string) *userscript.Script {
	t.Helper()
	src := "// ==UserScript==\n// " + strings.Join(lines, "\n// ") + "\n// ==/UserScript==\nlog.push(document.readyState);\n"
	s, err := userscript.Parse("/srv/scripts/orders.user.js", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestUserscriptWrapper runs the rendered wrapper in Node with a stand-in
// document: it runs where the patterns say, at its @run-at, once per
// document, and not in a frame with @noframes.
func TestUserscriptWrapper(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	tests := []struct {
		name  string
		lines []string
		href  string
		frame bool
		want  string // the readyStates the script ran at
	}{
		{"start", []string{"@match https://a.example/*", "@run-at document-start"}, "https://a.example/x", false, "loading"},
		{"end", []string{"@match https://a.example/*", "@run-at document-end"}, "https://a.example/x", false, "interactive"},
		{"idle", []string{"@match https://a.example/*"}, "https://a.example/x", false, "interactive-later"},
		{"no match", []string{"@match https://a.example/*", "@run-at document-start"}, "https://b.example/x", false, ""},
		{"excluded", []string{"@match https://a.example/*", "@exclude https://a.example/admin*", "@run-at document-start"}, "https://a.example/admin/1", false, ""},
		{"frame", []string{"@match https://a.example/*", "@run-at document-start"}, "https://a.example/x", true, "loading"},
		{"noframes", []string{"@match https://a.example/*", "@run-at document-start", "@noframes"}, "https://a.example/x", true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var u userscripts
			if err := u.prepare([]*userscript.Script{testUserscript(t, tt.lines...)}, "nonce"); err != nil {
				t.Fatal(err)
			}
			var p page.AddScriptToEvaluateOnNewDocumentParams
			if err := jsonv2.Unmarshal(u.params[0], &p); err != nil {
				t.Fatal(err)
			}
			if p.RunImmediately == nil || !*p.RunImmediately {
				t.Error("the script does not run in documents already open")
			}
			frame := "false"
			if tt.frame {
				frame = "true"
			}
			// The script logs document.readyState; what it logs in the
			// task after DOMContentLoaded is marked -later (document-idle).
			harness := `
globalThis.log = [];
globalThis.location = { href: ` + jsString(tt.href) + ` };
globalThis.window = globalThis;
if (` + frame + `) globalThis.top = {};
globalThis.document = new EventTarget();
document.readyState = 'loading';
const script = ` + jsString(p.Source) + `;
(0, eval)(script);
(0, eval)(script); // a second run in the same document does nothing
document.readyState = 'interactive';
document.dispatchEvent(new Event('DOMContentLoaded'));
const before = log.length;
setTimeout(() => {
  for (let i = before; i < log.length; i++) log[i] += '-later';
  console.log(log.join(','));
}, 0);
`
			out, err := exec.Command("node", "-e", harness).CombinedOutput()
			if err != nil {
				t.Fatalf("node: %v\n%s", err, out)
			}
			if got := strings.TrimSpace(string(out)); got != tt.want {
				t.Errorf("ran at %q, want %q", got, tt.want)
			}
		})
	}
}

// TestUserscriptLines: an exception's line in the wrapper maps back to the
// line of the file.
func TestUserscriptLines(t *testing.T) {
	t.Parallel()
	var u userscripts
	s := testUserscript(t, "@match https://a.example/*")
	if err := u.prepare([]*userscript.Script{s}, "n"); err != nil {
		t.Fatal(err)
	}
	var p page.AddScriptToEvaluateOnNewDocumentParams
	if err := jsonv2.Unmarshal(u.params[0], &p); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(p.Source, "\n")
	if lines[userscriptFirstLine] != "// ==UserScript==" {
		t.Errorf("line %d of the wrapper is %q, want the script's first line", userscriptFirstLine, lines[userscriptFirstLine])
	}
	if !strings.HasSuffix(strings.TrimSpace(p.Source), "//# sourceURL="+userscriptURL+"0/orders.user.js") {
		t.Errorf("the wrapper does not end with its source URL:\n%s", p.Source[len(p.Source)-80:])
	}
	if u.byURL[userscriptURL+"0/orders.user.js"] != (usRef{name: s.Name, file: s.File}) {
		t.Error("the source URL does not lead back to the script")
	}
}

// TestUserscriptsReload: when the set is replaced, a target followed
// already gets the new script (not run in its open documents) and loses the
// old one by its identifier; a target attached later gets the new one
// alone; a document loaded is noted as run by the scripts that take its
// URL, and not by those removed, nor an error page.
func TestUserscriptsReload(t *testing.T) {
	named := func(name string) *userscript.Script {
		return testUserscript(t, "@name "+name, "@match http://a.test/*")
	}
	set := userscript.NewSet([]*userscript.Script{named("Old")})
	runs := userscript.NewRuns()
	c, f := newTestConn(t)
	b, err := NewBrowser(c, Options{Backend: polyfill.BackendPolyfill, Logger: slog.New(slog.DiscardHandler), Userscripts: set, UserscriptRuns: runs})
	if err != nil {
		t.Fatal(err)
	}
	go b.Start(t.Context(), newFakeSink())
	for range 2 {
		f.reply(t, f.next(t).ID, `{}`)
	}
	// setup answers a target's setup, giving the userscript's registration
	// (the second script added, after the page script) the identifier id,
	// and returns the sources of the scripts added.
	setup := func(session target.SessionID, id string) []string {
		var added []string
		for {
			m := f.next(t)
			res := `{}`
			if m.Method == page.CommandAddScriptToEvaluateOnNewDocument {
				var p page.AddScriptToEvaluateOnNewDocumentParams
				jsonv2.Unmarshal(m.Params, &p)
				if added = append(added, p.Source); len(added) == 2 {
					res = `{"identifier":"` + id + `"}`
				}
			}
			f.feed(t, &cdproto.Message{ID: m.ID, SessionID: session, Result: jsonv2.Value(res)})
			if m.Method == runtime.CommandRunIfWaitingForDebugger {
				return added
			}
		}
	}
	f.feed(t, attachedEvent("", "S1", "T1", "page", "about:blank", true))
	if added := setup("S1", "us-1"); len(added) != 2 || !strings.Contains(added[1], "@name Old") {
		t.Fatalf("the setup added %d scripts, want the page script and Old", len(added))
	}

	set.Replace([]*userscript.Script{named("New")})
	m := f.next(t)
	var p page.AddScriptToEvaluateOnNewDocumentParams
	if err := jsonv2.Unmarshal(m.Params, &p); err != nil || m.Method != page.CommandAddScriptToEvaluateOnNewDocument || !strings.Contains(p.Source, "@name New") {
		t.Fatalf("after the reload the browser was sent %s %.80s, want New added", m.Method, p.Source)
	}
	if p.RunImmediately != nil && *p.RunImmediately {
		t.Error("the new script runs in the documents already open")
	}
	f.feed(t, &cdproto.Message{ID: m.ID, SessionID: "S1", Result: jsonv2.Value(`{"identifier":"us-2"}`)})
	m = f.next(t)
	if m.Method != page.CommandRemoveScriptToEvaluateOnNewDocument || !strings.Contains(string(m.Params), `"us-1"`) {
		t.Fatalf("then %s %s, want Old removed by its identifier", m.Method, m.Params)
	}
	f.feed(t, &cdproto.Message{ID: m.ID, SessionID: "S1", Result: jsonv2.Value(`{}`)})

	f.feed(t, event("S1", cdproto.EventPageFrameNavigated, `{"frame":{"id":"T1","loaderId":"L1","url":"http://a.test/x","securityOrigin":"http://a.test","mimeType":"text/html","domainAndRegistry":"","secureContextType":"InsecureScheme","crossOriginIsolatedContextType":"NotIsolated","gatedAPIFeatures":[]},"type":"Navigation"}`))
	// An error page runs no script.
	f.feed(t, event("S1", cdproto.EventPageFrameNavigated, `{"frame":{"id":"T1","loaderId":"L2","url":"http://a.test/down","unreachableUrl":"http://a.test/down","securityOrigin":"http://a.test","mimeType":"text/html","domainAndRegistry":"","secureContextType":"InsecureScheme","crossOriginIsolatedContextType":"NotIsolated","gatedAPIFeatures":[]},"type":"Navigation"}`))
	f.feed(t, attachedEvent("", "S2", "T2", "page", "about:blank", true))
	if added := setup("S2", "us-3"); len(added) != 2 || !strings.Contains(added[1], "@name New") {
		t.Errorf("a target attached after the reload got %d scripts, want the page script and New", len(added))
	}
	if n, urls := runs.Of("New"); n != 1 || len(urls) != 1 || urls[0] != "http://a.test/x" {
		t.Errorf("New ran in %d documents %v, want http://a.test/x", n, urls)
	}
	if n, _ := runs.Of("Old"); n != 0 {
		t.Errorf("Old, removed, ran in %d documents", n)
	}
}

// TestUserscriptsNumbering: a Browser made after a reload (a reconnection)
// numbers the scripts in force as the Set does, after the ones before, and
// still names the scripts of those numbers, which documents open since may
// run.
func TestUserscriptsNumbering(t *testing.T) {
	t.Parallel()
	old, cur := testUserscript(t, "@name Old", "@match http://a.test/*"), testUserscript(t, "@name New", "@match http://a.test/*")
	set := userscript.NewSet([]*userscript.Script{old})
	set.Replace([]*userscript.Script{cur})
	var u userscripts
	scripts, past, _ := set.Numbered()
	if err := u.set(scripts, past); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		n    int
		name string
	}{{0, "Old"}, {1, "New"}, {2, ""}} {
		if got := u.name(&tt.n); got != tt.name {
			t.Errorf("script %d is named %q, want %q", tt.n, got, tt.name)
		}
	}
	if s, ok := u.lookup(sourceURL(0, old.File)); !ok || s.name != "Old" {
		t.Errorf("the source URL of script 0 gives %+v %v, want Old", s, ok)
	}
	var p page.AddScriptToEvaluateOnNewDocumentParams
	if err := jsonv2.Unmarshal(u.params[0], &p); err != nil {
		t.Fatal(err)
	}
	if len(u.params) != 1 || !strings.Contains(p.Source, "//# sourceURL="+sourceURL(1, cur.File)) {
		t.Errorf("the script in force is not injected as number 1:\n%s", p.Source[len(p.Source)-80:])
	}
}
