package hub_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

func TestCallArguments(t *testing.T) {
	tests := []struct {
		name string
		args json.RawMessage
		want string
	}{
		{"nil", nil, `{}`},
		{"empty", json.RawMessage{}, `{}`},
		{"null", json.RawMessage(`null`), `{}`},
		{"object", json.RawMessage(`{"q":"milk","n":2}`), `{"q":"milk","n":2}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &fakeBrowser{}
			h := hub.New(b, hub.Options{})
			h.Update(mkDoc("a", "A", origin), mkTools("search"), nil)
			if r := h.Call(context.Background(), site+"_search", tt.args); r.IsError {
				t.Fatalf("Call failed: %s", text(t, r))
			}
			got := b.last(t)
			if string(got.Input) != tt.want || got.DocKey != "a" || got.Tool != "search" {
				t.Errorf("browser got %s %s %s, want a search %s", got.DocKey, got.Tool, got.Input, tt.want)
			}
		})
	}
}

// ---- catalog changes ----------------------------------------------------

func TestCallResults(t *testing.T) {
	tests := []struct {
		name       string
		call       string
		res        core.Result
		err        error
		wantError  bool
		wantText   string // a substring
		wantStruct map[string]any
		broken     bool // core.Outcome.Broken
	}{
		{name: "unknown name", call: "nope_search", wantError: true, wantText: `no open page has a tool named "nope_search"`},
		{name: "invoke error", call: site + "_search", err: errors.New("the bridge broke"), wantError: true, wantText: site + "_search failed: the bridge broke"},
		{name: "page throws", call: site + "_search", res: core.Result{Err: "boom"}, wantError: true, wantText: "boom"},
		{name: "page crashed", call: site + "_search", err: core.ErrPageCrashed, wantError: true, broken: true,
			wantText: "the page in tab 1 crashed; its tools come back when it is reloaded (webmcp_reload_tab with tab 1)"},
		{name: "page server protocol error", call: site + "_search", res: core.Result{Err: "the page server refused the call: boom", Protocol: true},
			wantError: true, broken: true, wantText: "refused the call: boom"},
		{name: "string", call: site + "_search", res: core.Result{Kind: "string", Value: "found 3"}, wantText: "found 3"},
		{name: "json object", call: site + "_search", res: core.Result{Kind: "json", Value: `{"sum":3}`}, wantText: `{"sum":3}`, wantStruct: map[string]any{"sum": float64(3)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &fakeBrowser{respond: func(context.Context, invocation) (core.Result, error) { return tt.res, tt.err }}
			h := hub.New(b, hub.Options{})
			h.Update(mkDoc("a", "A", origin), mkTools("search"), nil)
			r := h.Call(context.Background(), tt.call, json.RawMessage(`{}`))
			if r.IsError != tt.wantError || r.Broken != tt.broken {
				t.Errorf("IsError = %v, Broken = %v, want %v, %v", r.IsError, r.Broken, tt.wantError, tt.broken)
			}
			if got := text(t, r); !strings.Contains(got, tt.wantText) {
				t.Errorf("text = %q, want it to contain %q", got, tt.wantText)
			}
			if tt.wantStruct == nil {
				if r.Structured != nil {
					t.Errorf("Structured = %s, want none", r.Structured)
				}
			} else {
				var got any
				if err := json.Unmarshal(r.Structured, &got); err != nil || !reflect.DeepEqual(got, tt.wantStruct) {
					t.Errorf("Structured = %s, want %#v", r.Structured, tt.wantStruct)
				}
			}
			if tt.name == "unknown name" && b.count() != 0 {
				t.Errorf("an unknown name reached the browser %d times", b.count())
			}
		})
	}
}

func TestCallResultIsCapped(t *testing.T) {
	b := &fakeBrowser{respond: func(context.Context, invocation) (core.Result, error) {
		return core.Result{Kind: "string", Value: strings.Repeat("x", 100)}, nil
	}}
	h := hub.New(b, hub.Options{MaxResultBytes: 10})
	h.Update(mkDoc("a", "A", origin), mkTools("search"), nil)
	got := text(t, h.Call(context.Background(), site+"_search", nil))
	if !strings.HasPrefix(got, strings.Repeat("x", 10)+"\n") || !strings.Contains(got, "cut to 10 of 100") {
		t.Errorf("text = %q, want 10 x's and a notice of the cut", got)
	}
}

func TestCallTimeout(t *testing.T) {
	b := &fakeBrowser{respond: blockUntilDone}
	h := hub.New(b, hub.Options{CallTimeout: 50 * time.Millisecond})
	h.Update(mkDoc("a", "A", origin), mkTools("search"), nil)
	r := h.Call(context.Background(), site+"_search", nil)
	if !r.IsError {
		t.Fatal("a call that never answers is not an error")
	}
	// The error names the limit and the flag that sets it.
	if got, want := text(t, r), site+"_search did not answer within 50ms, the limit set by --call-timeout"; !strings.HasPrefix(got, want) {
		t.Errorf("text = %q, want it to start with %q", got, want)
	}
}

func TestCallerCancels(t *testing.T) {
	b := &fakeBrowser{respond: blockUntilDone, started: make(chan invocation, 1)}
	h := hub.New(b, hub.Options{})
	h.Update(mkDoc("a", "A", origin), mkTools("search"), nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan core.Outcome, 1)
	go func() { done <- h.Call(ctx, site+"_search", nil) }()
	<-b.started
	cancel()
	r := <-done
	if want := "the call to " + site + "_search was cancelled by the client"; !r.IsError || text(t, r) != want {
		t.Errorf("a cancelled call gave %+v, want the error %q", r, want)
	}
}

func TestMaxInflightPerTab(t *testing.T) {
	b := &fakeBrowser{
		started: make(chan invocation, 10),
		respond: func(ctx context.Context, in invocation) (core.Result, error) {
			if string(in.Input) == `{"block":true}` {
				return blockUntilDone(ctx, in)
			}
			return core.Result{Kind: "string", Value: "ok " + in.DocKey}, nil
		},
	}
	h := hub.New(b, hub.Options{MaxInflightPerTab: 1})
	h.Update(mkDoc("a", "A", origin), mkTools("slow", "fast"), nil)
	h.Update(mkDoc("b", "B", "https://example.com"), mkTools("fast"), nil)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan core.Outcome, 1)
	go func() { done <- h.Call(ctx, site+"_slow", json.RawMessage(`{"block":true}`)) }()
	if in := <-b.started; in.Tool != "slow" {
		t.Fatalf("first call ran %q, want slow", in.Tool)
	}

	r := h.Call(context.Background(), site+"_fast", nil)
	if !r.IsError || !strings.Contains(text(t, r), "tab 1 already runs 1 calls") {
		t.Errorf("second call to the busy tab gave %+v, want a refusal", r)
	}
	if got := b.count(); got != 1 {
		t.Errorf("the refused call reached the browser (%d calls)", got)
	}
	r = h.Call(context.Background(), "example_com_fast", nil)
	if r.IsError || text(t, r) != "ok b" {
		t.Errorf("a call to another tab gave %+v, want ok b", r)
	}
	<-b.started

	cancel()
	if r := <-done; !r.IsError {
		t.Errorf("the cancelled call gave %+v, want an error", r)
	}
	// The slot is free again.
	r = h.Call(context.Background(), site+"_fast", nil)
	if r.IsError || text(t, r) != "ok a" {
		t.Errorf("after the slow call ended, a call to tab 1 gave %+v, want ok a", r)
	}
}

// ---- tabs ---------------------------------------------------------------

func TestCallErrorWording(t *testing.T) {
	fail := func(err string, before func(h *hub.Hub)) func(h *hub.Hub) func(context.Context, invocation) (core.Result, error) {
		return func(h *hub.Hub) func(context.Context, invocation) (core.Result, error) {
			return func(context.Context, invocation) (core.Result, error) {
				before(h)
				return core.Result{}, errors.New(err)
			}
		}
	}
	failWith := func(err error, before func(h *hub.Hub)) func(h *hub.Hub) func(context.Context, invocation) (core.Result, error) {
		return func(h *hub.Hub) func(context.Context, invocation) (core.Result, error) {
			return func(context.Context, invocation) (core.Result, error) {
				before(h)
				return core.Result{}, err
			}
		}
	}
	block := func(*hub.Hub) func(context.Context, invocation) (core.Result, error) { return blockUntilDone }
	tests := []struct {
		name    string
		timeout time.Duration // the hub's
		client  time.Duration // the caller's deadline, 0 for none
		respond func(h *hub.Hub) func(context.Context, invocation) (core.Result, error)
		want    string
		broken  bool // the call broke rather than failed (core.Outcome.Broken: a task fails)
	}{
		{"our timeout", 50 * time.Millisecond, 0, block, site + "_search did not answer within 50ms", true},
		{"the client's deadline", time.Minute, 50 * time.Millisecond, block, "the client's deadline passed before " + site + "_search answered", false},
		{"the page navigated", time.Minute, 0, fail("Execution context was destroyed", func(h *hub.Hub) {
			h.DropDoc("a")
		}), site + "_search did not finish: the page navigated away", true},
		{"the page navigated and came back", time.Minute, 0, fail("Inspected target navigated or closed", func(h *hub.Hub) {
			h.DropDoc("a")
			h.Update(mkDoc("a", "A", origin), mkTools("search"), nil)
		}), site + "_search did not finish: the page navigated away", true},
		{"the tab closed", time.Minute, 0, fail("the page navigated away", func(h *hub.Hub) {
			h.DropDoc("a")
			go func() {
				// The browser's pace, not a wait: the detach comes after the
				// call failed, and the hub must wait for it (settleTime).
				time.Sleep(50 * time.Millisecond)
				h.TabClosed("A")
			}()
		}), site + "_search did not finish: its tab was closed; open the page again with webmcp_open_tab (url " + origin + "/page-a)", true},
		// The browser failed the call because the document went
		// (core.ErrNavigated), and reports the document or the tab gone
		// after the hub's 300 ms settle time, as a busy machine does.
		{"gone, navigation reported late", time.Minute, 0, failWith(core.ErrNavigated, func(h *hub.Hub) {
			go func() {
				time.Sleep(400 * time.Millisecond) // the browser's pace (see above)
				h.DropDoc("a")
			}()
		}), site + "_search did not finish: the page navigated away", true},
		{"gone, close reported late", time.Minute, 0, failWith(core.ErrNavigated, func(h *hub.Hub) {
			go func() {
				time.Sleep(400 * time.Millisecond) // the browser's pace (see above)
				h.TabClosed("A")
			}()
		}), site + "_search did not finish: its tab was closed", true},
		{"gone, never reported", time.Minute, 0, failWith(core.ErrNavigated, func(*hub.Hub) {}),
			site + "_search did not finish: the page navigated away", true},
		{"another failure", time.Minute, 0, fail("the page script failed: boom", func(*hub.Hub) {}),
			site + "_search failed: the page script failed: boom", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := &fakeBrowser{}
			h := hub.New(b, hub.Options{CallTimeout: tt.timeout})
			b.respond = tt.respond(h)
			h.Update(mkDoc("a", "A", origin), mkTools("search"), nil)
			ctx := context.Background()
			if tt.client > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.client)
				defer cancel()
			}
			r := h.Call(ctx, site+"_search", nil)
			if !r.IsError || !strings.HasPrefix(text(t, r), tt.want) {
				t.Errorf("result %v %q, want the error %q", r.IsError, text(t, r), tt.want)
			}
			if r.Broken != tt.broken {
				t.Errorf("Broken = %v, want %v", r.Broken, tt.broken)
			}
		})
	}
}

func TestUntrustedContentIsMarked(t *testing.T) {
	b := &fakeBrowser{respond: func(context.Context, invocation) (core.Result, error) {
		return core.Result{Kind: "string", Value: "a post"}, nil
	}}
	h := hub.New(b, hub.Options{})
	h.Update(mkDoc("a", "A", origin), []core.Tool{
		{Name: "read", Description: "reads posts", Annotations: map[string]any{"untrustedContentHint": true}},
		{Name: "own", Description: "own data"},
	}, nil)
	r := h.Call(context.Background(), site+"_read", nil)
	if len(r.Content) != 2 || r.Meta[hub.UntrustedMetaKey] == nil {
		t.Errorf("untrusted result = %+v, want a notice and _meta", r)
	}
	r = h.Call(context.Background(), site+"_own", nil)
	if len(r.Content) != 1 || r.Meta[hub.UntrustedMetaKey] != nil {
		t.Errorf("plain result = %+v, want no notice", r)
	}
}
