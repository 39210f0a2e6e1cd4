package e2e

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// confirmPage is a page whose tool calls confirm() itself and returns what
// the page saw.
const confirmPage = `<!doctype html><title>confirm() in a tool</title><body>
<script>
document.modelContext.registerTool({ name: "ask_user", description: "Ask the user a yes/no question and return the answer.",
  inputSchema: { type: "object", properties: { question: { type: "string" } }, required: ["question"] },
  execute: async ({ question }) => "the page saw " + confirm(question) });
</script></body>`

var addedNote = regexp.MustCompile(`Added note #(\d+)`)

// TestRelayHITL: a page dialog during a call through the relay (relay,
// browser side with real Chromium, connect: separate processes of the real
// binary) is asked to the connect side's go-sdk client by elicitation,
// with a 2026-07-28 client as a multi round-trip result and with a
// 2025-11-25 client as elicitation/create, and the answer reaches the
// page; a client without elicitation gets connect's --dialogs.
func TestRelayHITL(t *testing.T) {
	t.Parallel()
	base := serveFixtures(t)
	page := serveHandler(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(confirmPage))
	}))
	r := startRelay(t)
	tok := r.token("alice")
	r.startBrowserSide(t, tok, "e2e-hitl", page+"/", base+"/notes/")

	yes, no := map[string]any{"confirm": true}, map[string]any{"confirm": false}
	for _, tc := range []struct {
		name     string
		protocol string         // "" for the latest
		elicit   bool           // the client has an elicitation handler
		answer   map[string]any // its answer (nil: decline)
		flags    []string       // connect's extra flags
		notes    bool           // delete_note (requestUserInteraction) rather than ask_user
		want     string
		wantErr  bool
	}{
		{name: "confirm accepted/2026-07-28", protocol: "2026-07-28", elicit: true, answer: yes, want: "the page saw true"},
		{name: "confirm accepted/2025-11-25", protocol: "2025-11-25", elicit: true, answer: yes, want: "the page saw true"},
		{name: "confirm answered no", elicit: true, answer: no, want: "the page saw false"},
		{name: "confirm declined/2025-11-25", protocol: "2025-11-25", elicit: true, want: "the page saw false"},
		{name: "requestUserInteraction yes", elicit: true, answer: yes, notes: true, want: "Deleted note #"},
		{name: "requestUserInteraction yes/2025-11-25", protocol: "2025-11-25", elicit: true, answer: yes, notes: true, want: "Deleted note #"},
		{name: "requestUserInteraction no", elicit: true, answer: no, notes: true, want: "deletion cancelled by the user", wantErr: true},
		{name: "no elicitation/default fail", want: "needed a person", wantErr: true},
		{name: "no elicitation/default fail/requestUserInteraction", notes: true, want: "needed a person", wantErr: true},
		{name: "no elicitation/--dialogs accept", flags: []string{"--dialogs", "accept"}, want: "the page saw true"},
		{name: "no elicitation/--dialogs dismiss", flags: []string{"--dialogs", "dismiss"}, want: "the page saw false"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var asked atomic.Int32
			msgs := make(chan string, 4)
			var opts *mcp.ClientOptions
			if tc.elicit {
				opts = elicitor(tc.answer, &asked, msgs)
			}
			args := append([]string{"connect", "--relay", r.url("/mcp"), "--token", tok}, tc.flags...)
			c := startProto(t, opts, tc.protocol, args...)
			if tc.protocol != "" && c.cs.InitializeResult().ProtocolVersion != tc.protocol {
				t.Fatalf("negotiated %s, want %s", c.cs.InitializeResult().ProtocolVersion, tc.protocol)
			}
			var res *mcp.CallToolResult
			question := "Proceed with " + tc.name + "?"
			if tc.notes {
				tools := c.waitFor("the notes tools across the relay", hasSuffix("delete_note", 1))
				added := c.callOK(toolWithSuffix(tools, "add_note")[0], map[string]any{"title": "a", "content": "b"})
				m := addedNote.FindStringSubmatch(added)
				if m == nil {
					t.Fatalf("add_note = %q", added)
				}
				id, _ := strconv.Atoi(m[1]) // the regexp matched digits
				question = "Delete note #" + m[1] + "?"
				res = c.call(toolWithSuffix(tools, "delete_note")[0], map[string]any{"id": id})
			} else {
				tools := c.waitFor("the ask_user tool across the relay", hasSuffix("ask_user", 1))
				res = c.call(toolWithSuffix(tools, "ask_user")[0], map[string]any{"question": question})
			}
			if res.IsError != tc.wantErr || !strings.Contains(text(res), tc.want) {
				t.Errorf("result = isError %v %q, want isError %v and %q", res.IsError, text(res), tc.wantErr, tc.want)
			}
			if !tc.elicit {
				return
			}
			if asked.Load() != 1 {
				t.Errorf("the client was asked %d times, want 1", asked.Load())
			}
			if m := <-msgs; !strings.Contains(m, question) {
				t.Errorf("the question %q does not carry the page's text %q", m, question)
			}
		})
	}
}
