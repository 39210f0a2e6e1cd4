package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	cdpt "github.com/chromedp/cdproto/cdp"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/cdp"
)

// attachTabs is the number of tabs open in the browser of the attach row.
const attachTabs = 50

// attach50 measures attaching to a person's browser: a browser with
// attachTabs native WebMCP tabs of page already loaded (and remote debugging
// on, so it wrote DevToolsActivePort), then `attach --auto-connect` started
// and timed until its first tools/list is answered. That list must hold
// every tab's tools (the first-list hold waits for the open tabs): a list
// with fewer is an error, not a figure.
func attach50(ctx context.Context, bin, page string, add func(what, value string)) error {
	dir, stop, err := nativeBrowser(ctx, page, attachTabs)
	if err != nil {
		return fmt.Errorf("the browser of the attach row: %w", err)
	}
	defer stop()

	s := &server{changes: make(chan struct{}, 1024)}
	// --wait-tools well above the target: the row measures how long the
	// complete list takes, rather than cutting it at the default bound.
	s.cmd = exec.Command(bin, "attach", "--auto-connect", "--user-data-dir", dir, "--state-dir", "", "--wait-tools", "60s", "--log-level", "warn")
	s.cmd.Stderr = os.Stderr
	t0 := time.Now()
	cs, err := newClient(s.changes).Connect(ctx, &mcp.CommandTransport{Command: s.cmd}, nil)
	if err != nil {
		return fmt.Errorf("starting %s attach --auto-connect: %w", bin, err)
	}
	s.cs = cs
	defer s.close()
	tools, err := listAll(ctx, cs)
	if err != nil {
		return err
	}
	took := time.Since(t0)
	n := 0
	for _, t := range tools {
		if strings.HasSuffix(t.Name, "_echo_0") {
			n++
		}
	}
	// One routed name per tab, plus the site-level one (as in waitCount).
	if n != attachTabs+1 {
		return fmt.Errorf("attach row: the first tools/list has %d names for echo_0, from %d open tabs", n, attachTabs)
	}
	add(fmt.Sprintf("attach --auto-connect to a browser with %d open native WebMCP tabs → complete first tools/list (%d tools; target ≤ 2 s)", attachTabs, len(tools)),
		fmt.Sprintf("%s ms", ms(took)))
	return nil
}

// openLoaded opens n tabs of page through conn and waits until each has
// loaded (the bench page registers its tools as it is parsed).
func openLoaded(ctx context.Context, conn *cdp.Conn, page string, n int) error {
	wctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	// One at a time, each in the foreground until it loaded: headless
	// Chromium here left tabs opened in the background unloaded.
	flatten := true
	for i := 0; i < n; i++ {
		res, err := cdpt.Call(wctx, conn.Browser(), target.CreateTarget, target.CreateTargetParams{URL: page})
		if err != nil {
			return fmt.Errorf("opening tab %d of the attach row: %w", i+1, err)
		}
		id := res.TargetID
		att, err := cdpt.Call(wctx, conn.Browser(), target.AttachToTarget, target.AttachToTargetParams{TargetID: id, Flatten: &flatten})
		if err != nil {
			return fmt.Errorf("attaching to tab %d of the attach row: %w", i+1, err)
		}
		sess := conn.Attach(att.SessionID)
		for {
			cdpt.Call(wctx, conn.Browser(), target.ActivateTarget, target.ActivateTargetParams{TargetID: id})
			res, err := cdpt.Call(wctx, sess, cdpruntime.Evaluate, cdpruntime.EvaluateParams{
				Expression: `document.readyState === "complete" && location.href !== "about:blank"`,
			})
			if err == nil && res.Result != nil && string(res.Result.Value) == "true" {
				break
			}
			select {
			case <-wctx.Done():
				return fmt.Errorf("tab %d of the attach row did not load: %w", i+1, wctx.Err())
			case <-time.After(50 * time.Millisecond):
			}
		}
		if _, err := cdpt.Call(wctx, conn.Browser(), target.DetachFromTarget, target.DetachFromTargetParams{SessionID: att.SessionID}); err != nil {
			return fmt.Errorf("detaching from tab %d of the attach row: %w", i+1, err)
		}
	}
	return nil
}
