package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestToolsBeforeLoad: a tool the page registers reaches the client (in
// the catalog, with list_changed) while the page's load event is still
// held by an image the server does not answer: registration → client
// waits for neither the load nor a timer. On both backends.
func TestToolsBeforeLoad(t *testing.T) {
	t.Parallel()
	for _, be := range conformanceBackends {
		t.Run(be.name, func(t *testing.T) {
			release := make(chan struct{})
			held := make(chan struct{}, 1) // the page asked for /hold
			mux := http.NewServeMux()
			mux.HandleFunc("/early", func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				fmt.Fprint(w, `<!DOCTYPE html><title>early</title><img src="/hold" alt=""><script>
document.modelContext.registerTool({name: "early_tool", description: "Registered before the load event.", execute: async () => document.readyState});
</script>`)
			})
			mux.HandleFunc("/hold", func(w http.ResponseWriter, r *http.Request) {
				select {
				case held <- struct{}{}:
				default:
				}
				select {
				case <-release:
				case <-r.Context().Done():
				}
			})
			srv := httptest.NewServer(mux)
			defer srv.Close()
			defer close(release) // before Close, which waits for /hold
			// --wait-tools 0: the first tools/list answers at once, not once
			// the start page loaded (it never does while /hold is held).
			args := append(append([]string{"launch", "--headless", "--wait-tools", "0"}, be.args...), srv.URL+"/early")
			c := start(t, args...)
			deadline := time.After(20 * time.Second)
			for {
				select {
				case <-c.changes:
				case <-deadline:
					t.Fatalf("no tools/list_changed brought early_tool within 20 s; tools: %v", names(c.tools()))
				}
				if len(toolWithSuffix(c.tools(), "early_tool")) == 1 {
					break
				}
			}
			// The tool answers with the document's readyState: not yet
			// "complete", as /hold is still unanswered.
			got := c.call(toolWithSuffix(c.tools(), "early_tool")[0], map[string]any{})
			if got.IsError || len(got.Content) != 1 {
				t.Fatalf("calling early_tool before the load: %v", got.Content)
			}
			if text, ok := got.Content[0].(*mcp.TextContent); !ok || text.Text == "complete" {
				t.Fatalf("early_tool answered %#v: the page had loaded", got.Content[0])
			}
			// And the page holds its load on /hold, as the test means it to.
			select {
			case <-held:
			case <-time.After(10 * time.Second):
				t.Fatal("the page never asked for /hold, so nothing held its load")
			}
		})
	}
}
