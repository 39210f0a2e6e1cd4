package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// elicitor answers elicitation requests with accept and the given content,
// or with decline when content is nil, and counts the questions.
func elicitor(content map[string]any, asked *atomic.Int32, messages chan<- string) *mcp.ClientOptions {
	return &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked.Add(1)
			select {
			case messages <- req.Params.Message:
			default:
			}
			if content == nil {
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
			return &mcp.ElicitResult{Action: "accept", Content: content}, nil
		},
	}
}

// TestDialogsThroughElicitation: a confirm() opened by a tool (through
// agent.requestUserInteraction) is asked to the client, and its answer goes
// back to the page.
func TestDialogsThroughElicitation(t *testing.T) {
	t.Parallel()
	base := serveFixtures(t)
	for _, tc := range []struct {
		name     string
		protocol string
		answer   map[string]any
		want     string
		wantErr  bool
	}{
		{"yes/2026-07-28 multi round-trip", "2026-07-28", map[string]any{"confirm": true}, "Deleted note #1", false},
		{"yes/2025-11-25 elicitation request", "2025-11-25", map[string]any{"confirm": true}, "Deleted note #1", false},
		{"no", "", map[string]any{"confirm": false}, "deletion cancelled by the user", true},
		{"decline/2025-11-25", "2025-11-25", nil, "deletion cancelled by the user", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var asked atomic.Int32
			msgs := make(chan string, 4)
			c := startProto(t, elicitor(tc.answer, &asked, msgs), tc.protocol, "launch", "--headless", base+"/notes/")
			if tc.protocol != "" && c.cs.InitializeResult().ProtocolVersion != tc.protocol {
				t.Fatalf("negotiated %s, want %s", c.cs.InitializeResult().ProtocolVersion, tc.protocol)
			}
			tools := c.waitFor("notes tools", hasSuffix("delete_note", 1))
			c.callOK(toolWithSuffix(tools, "add_note")[0], map[string]any{"title": "a", "content": "b"})
			res := c.call(toolWithSuffix(tools, "delete_note")[0], map[string]any{"id": 1})
			if res.IsError != tc.wantErr || !strings.Contains(text(res), tc.want) {
				t.Errorf("delete_note = %v %q, want %v %q", res.IsError, text(res), tc.wantErr, tc.want)
			}
			if asked.Load() != 1 {
				t.Errorf("the client was asked %d times, want 1", asked.Load())
			}
			if m := <-msgs; !strings.Contains(m, "Delete note #1?") {
				t.Errorf("the question %q does not carry the page's text", m)
			}
		})
	}
}

// TestDialogPolicies: without elicitation, --dialogs accept and dismiss
// answer for the user.
func TestDialogPolicies(t *testing.T) {
	t.Parallel()
	base := serveFixtures(t)
	for _, tc := range []struct {
		policy, want string
		wantErr      bool
	}{
		{"accept", "Deleted note #1", false},
		{"dismiss", "deletion cancelled by the user", true},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			c := start(t, "launch", "--headless", "--dialogs", tc.policy, base+"/notes/")
			tools := c.waitFor("notes tools", hasSuffix("delete_note", 1))
			c.callOK(toolWithSuffix(tools, "add_note")[0], map[string]any{"title": "a", "content": "b"})
			res := c.call(toolWithSuffix(tools, "delete_note")[0], map[string]any{"id": 1})
			if res.IsError != tc.wantErr || !strings.Contains(text(res), tc.want) {
				t.Errorf("delete_note = %v %q", res.IsError, text(res))
			}
		})
	}
}

// TestConfirm: --confirm writes asks before a tool without readOnlyHint; a
// refusal is a clean error and the page is not called; read-only tools run
// without a question.
func TestConfirm(t *testing.T) {
	t.Parallel()
	base := serveFixtures(t)
	var asked atomic.Int32
	c := startWith(t, elicitor(nil, &asked, make(chan string, 4)), "launch", "--headless", "--confirm", "writes", base+"/notes/")
	tools := c.waitFor("notes tools", hasSuffix("add_note", 1))
	res := c.call(toolWithSuffix(tools, "add_note")[0], map[string]any{"title": "a", "content": "b"})
	if !res.IsError || !strings.Contains(text(res), "declined") {
		t.Errorf("declined add_note = %v %q", res.IsError, text(res))
	}
	if got := c.callOK(toolWithSuffix(tools, "list_notes")[0], map[string]any{}); got != "[]" {
		t.Errorf("list_notes = %s: the declined call reached the page", got)
	}
	if asked.Load() != 1 {
		t.Errorf("asked %d times, want 1 (read-only list_notes must not ask)", asked.Load())
	}

	var asked2 atomic.Int32
	c2 := startWith(t, elicitor(map[string]any{}, &asked2, make(chan string, 4)), "launch", "--headless", "--confirm", "writes", base+"/notes/")
	tools = c2.waitFor("notes tools", hasSuffix("add_note", 1))
	if got := c2.callOK(toolWithSuffix(tools, "add_note")[0], map[string]any{"title": "a", "content": "b"}); got != "Added note #1: a" {
		t.Errorf("confirmed add_note = %q", got)
	}
}

// TestCancelReachesPage: a client cancelling a call aborts the page's
// signal and frees the tab's slot; a long call sends progress.
func TestCancelReachesPage(t *testing.T) {
	t.Parallel()
	base := serveFixtures(t)
	progress := make(chan float64, 16)
	c := startWith(t, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			select {
			case progress <- req.Params.Progress:
			default:
			}
		},
	}, "launch", "--headless", base+"/current/")
	tools := c.waitFor("current tools", hasSuffix("slow_stats", 1))
	slow := toolWithSuffix(tools, "slow")[0]

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		params := &mcp.CallToolParams{Name: slow, Arguments: map[string]any{"ms": 60000}}
		params.SetProgressToken("p1")
		_, err := c.cs.CallTool(ctx, params)
		done <- err
	}()
	select {
	case p := <-progress:
		if p < 1 {
			t.Errorf("first progress %v, want >= 1 s", p)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no progress notification for a call running over a second")
	}
	cancel()
	if err := <-done; err == nil {
		t.Fatal("the cancelled call returned no error")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		var stats struct{ Started, Aborted int }
		json.Unmarshal([]byte(c.callOK(toolWithSuffix(tools, "slow_stats")[0], map[string]any{})), &stats)
		if stats.Started == 1 && stats.Aborted == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the page's signal was not aborted: %+v", stats)
		}
		time.Sleep(50 * time.Millisecond) // poll interval: the page tells no one that it saw the abort
	}
}
