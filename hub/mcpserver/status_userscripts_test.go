package mcpserver

import (
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// TestStatusPageUserscripts: the status page lists the userscripts whose
// tools are listed, each with its tools and their tabs; the page's own
// tools are not listed there, and without a userscript's tool the section
// is left out.
func TestStatusPageUserscripts(t *testing.T) {
	h := hub.New(noBrowser{}, hub.Options{Logger: slog.New(slog.DiscardHandler)})
	s := New(t.Context(), h, Options{Version: "test", Logger: slog.New(slog.DiscardHandler)})
	render := func() string {
		rec := httptest.NewRecorder()
		newStatusHandler(s, HTTPOptions{}, "127.0.0.1:8808").render(rec, httptest.NewRequest("GET", "/", nil))
		return rec.Body.String()
	}
	tool := func(name, script string) core.Tool {
		return core.Tool{Name: name, Description: "d", InputSchema: []byte(`{"type":"object"}`), Userscript: script}
	}
	for _, tab := range []string{"T1", "T2"} {
		h.TabOpened(tab, "http://127.0.0.1:8080/legacy/", "")
	}
	h.Update(core.Source{Key: "a", Tab: "T1", Origin: "http://127.0.0.1:8080", URL: "http://127.0.0.1:8080/legacy/"},
		[]core.Tool{tool("own", "")}, nil)
	if body := render(); strings.Contains(body, `id="userscripts"`) {
		t.Error("the page lists userscripts while no tool is a userscript's")
	}
	h.Update(core.Source{Key: "a", Tab: "T1", Origin: "http://127.0.0.1:8080", URL: "http://127.0.0.1:8080/legacy/"},
		[]core.Tool{tool("own", ""), tool("find_order", "Legacy <orders>"), tool("start", "Legacy orders: start")}, nil)
	h.Update(core.Source{Key: "b", Tab: "T2", Origin: "http://127.0.0.1:8080", URL: "http://127.0.0.1:8080/legacy/"},
		[]core.Tool{tool("find_order", "Legacy <orders>")}, nil)
	body := render()
	row := `<tr><td><code>Legacy &lt;orders&gt;</code></td><td><code>127_0_0_1_8080_find_order</code><br><code>127_0_0_1_8080_tab1_find_order</code><br><code>127_0_0_1_8080_tab2_find_order</code><br></td><td>1, 2</td></tr>`
	if !strings.Contains(body, row) {
		t.Errorf("the status page lacks %s", row)
	}
	if !strings.Contains(body, `<tr><td><code>Legacy orders: start</code></td><td><code>127_0_0_1_8080_start</code><br></td><td>1</td></tr>`) {
		t.Error("the status page lacks the second script")
	}
	if i, j := strings.Index(body, "Legacy &lt;orders&gt;"), strings.Index(body, "Legacy orders: start"); i > j {
		t.Error("the scripts are not in name order")
	}
	if sec := body[strings.Index(body, `id="userscripts"`):]; strings.Contains(sec[:strings.Index(sec, "</table>")], "_own") {
		t.Error("the page's own tool is listed as a userscript's")
	}
}
