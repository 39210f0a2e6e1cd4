package e2e

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/cdp"
)

// TestReliabilityCrashedTab (issue 15, point 2): a tab whose renderer
// crashes mid-call fails that call at once with words that say what to do,
// its tools leave the list, and webmcp_reload_tab brings them back.
// webmcp-cdp attaches to a Chromium the test started, so that the test can
// crash the tab over its own CDP connection (Page.crash).
func TestReliabilityCrashedTab(t *testing.T) {
	t.Parallel()
	base := serveFixtures(t)
	browserURL := startChrome(t, "about:blank")
	c := start(t, "attach", "--log-level", "debug", "--browser-url", browserURL, "--call-timeout", "30s")
	id := openTabAfterSetup(t, c, browserURL, base+"/current/")

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := cdp.Attach(ctx, cdp.Endpoint{BrowserURL: browserURL}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	tools := c.waitFor("the page's tools", func(m map[string]*mcp.Tool) bool { return hasSuffix("slow", 1)(m) && hasSuffix("slow_stats", 1)(m) })
	slow, stats := toolWithSuffix(tools, "slow")[0], toolWithSuffix(tools, "slow_stats")[0]

	// A call that would run 20 s; the tab crashes under it.
	type outcome struct {
		text  string
		isErr bool
		took  time.Duration
	}
	done := make(chan outcome, 1)
	go func() {
		start := time.Now()
		res := c.call(slow, map[string]any{"ms": 20000})
		done <- outcome{text(res), res.IsError, time.Since(start)}
	}()
	// The call reached the page (it waits 20 s there) once the page
	// counts it started.
	for deadline := time.Now().Add(20 * time.Second); ; {
		var st struct{ Started int }
		json.Unmarshal([]byte(c.callOK(stats, map[string]any{})), &st)
		if st.Started > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the slow call never reached the page")
		}
		time.Sleep(50 * time.Millisecond) // poll interval: the page tells no one that a call started
	}
	var attached target.AttachToTargetResult
	if err := conn.Browser().Call(ctx, target.CommandAttachToTarget, &target.AttachToTargetParams{TargetID: id, Flatten: ptrTo(true)}, &attached); err != nil {
		t.Fatal(err)
	}
	sess := conn.Attach(attached.SessionID)
	crashAt := time.Now()
	// The renderer dies before it can answer: send, do not wait.
	if _, err := sess.Send("Page.crash", nil); err != nil {
		t.Fatal(err)
	}
	var got outcome
	select {
	case got = <-done:
	case <-ctx.Done():
		t.Fatal("the call did not end")
	}
	failedIn := time.Since(crashAt)
	if !got.isErr || !strings.Contains(got.text, "crashed") || !strings.Contains(got.text, "webmcp_reload_tab") {
		t.Errorf("the call during the crash gave %v %q, want an error that says the page crashed and how to get it back", got.isErr, got.text)
	}
	if failedIn > 5*time.Second {
		t.Errorf("the call failed %s after the crash; it should fail at once", failedIn)
	}
	c.waitFor("the crashed tab's tools to go", func(m map[string]*mcp.Tool) bool { return len(toolWithSuffix(m, "slow")) == 0 })

	// webmcp_reload_tab brings the tab back, with its tools.
	var tab int
	for _, ti := range c.tabs() {
		if strings.HasSuffix(ti.URL, "/current/") {
			tab = ti.Tab
		}
	}
	if tab == 0 {
		t.Fatalf("the crashed tab is not listed: %+v", c.tabs())
	}
	c.callOK("webmcp_reload_tab", map[string]any{"tab": tab})
	back := c.waitFor("the tools after the reload", hasSuffix("slow", 1))
	if got := c.callOK(toolWithSuffix(back, "slow")[0], map[string]any{"ms": 1}); got != "waited 1 ms" {
		t.Errorf("after the reload, slow = %q", got)
	}
	reliabilityRow(t, "renderer crash during a call", "the call failed "+failedIn.Round(time.Millisecond).String()+" after the crash; tools gone, back after a reload")
}

func ptrTo[T any](v T) *T { return &v }
