package cdp

import (
	"os/exec"
	"strings"
	"testing"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/page"

	"github.com/webmcp-cdp/webmcp-cdp/internal/userscript"
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
	if u.byURL[userscriptURL+"0/orders.user.js"] != s {
		t.Error("the source URL does not lead back to the script")
	}
}
