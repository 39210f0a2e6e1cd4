package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	cdpt "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"

	"github.com/webmcp-cdp/webmcp-cdp/cdp"
	"github.com/webmcp-cdp/webmcp-cdp/polyfill"
)

// scriptDocs is the number of documents each side of the page-script rows
// loads (after scriptWarmup that are not counted).
const (
	scriptDocs   = 40
	scriptWarmup = 5
)

// backendSide is one backend of the rows that run on both: the page
// script's backend and whether the browser has native WebMCP.
type backendSide struct {
	name    string
	backend polyfill.Backend
	native  bool
}

var backendSides = []backendSide{
	{"polyfill", polyfill.BackendPolyfill, false},
	{"native", polyfill.BackendNative, true},
}

// Scripts of the page-script rows, injected around the page script: the
// marks read performance.now() before and after it (the scripts for new
// documents are compiled and run one by one, in order); observed adds up
// the time spent in MutationObserver callbacks (the page script's
// declarative-form watch is the only observer of the bench pages).
const (
	mark0    = "globalThis.__webmcpBenchT0 = performance.now();"
	mark1    = "globalThis.__webmcpBenchT1 = performance.now();"
	observed = `(() => { const MO = MutationObserver; globalThis.__webmcpBenchMO = 0;
  globalThis.MutationObserver = function (cb) { return new MO((r, o) => { const t = performance.now(); try { return cb(r, o); } finally { globalThis.__webmcpBenchMO += performance.now() - t; } }); };
  globalThis.MutationObserver.prototype = MO.prototype; })();`
	readCost = "JSON.stringify([globalThis.__webmcpBenchT1 - globalThis.__webmcpBenchT0, globalThis.__webmcpBenchMO])"
)

// scriptCostRows adds, per backend, what the page script costs one
// document of the bench page and of a large page (largePage): two tabs of
// one browser load the page in turn, both set up as webmcp-cdp sets up a
// tab (Runtime.enable, the binding, Page.enable), one with the page script
// between the marks, the other with the marks only. The rows give the
// script's compile and run at document start and, on the large page, the
// time its DOM watch takes while the page is parsed.
func scriptCostRows(ctx context.Context, base string, add func(what, value string)) error {
	for _, side := range backendSides {
		for _, pg := range []struct{ what, url string }{
			{"bench page", base + "/bench/"},
			{fmt.Sprintf("large page (%d form rows, %d list items, no declarative tool)", largeRows, largeItems), base + largePath},
		} {
			c, err := scriptCost(ctx, pg.url, side)
			if err != nil {
				return fmt.Errorf("page script cost (%s, %s): %w", side.name, pg.what, err)
			}
			add(fmt.Sprintf("page script, %s backend (%d KB), %s: compile + run at document start (%d documents; marks only: p50 %s ms)", side.name, c.size/1024, pg.what, scriptDocs, ms(c.without.Percentile(50))),
				c.with.summary())
			add(fmt.Sprintf("page script, %s backend, %s: its MutationObserver callbacks per document", side.name, pg.what), c.observers.summary())
		}
	}
	return nil
}

// scriptCosts are the samples of scriptCost.
type scriptCosts struct {
	with, without, observers Latencies
	size                     int
}

// benchScript is the page script of side's backend with a fresh nonce, and
// the name of the binding it calls, as webmcp-cdp makes them for a browser.
func benchScript(side backendSide) (binding, script string, err error) {
	nonce := make([]byte, 8)
	rand.Read(nonce)
	binding = "benchBinding" + hex.EncodeToString(nonce)
	script, err = polyfill.Script(polyfill.Options{Nonce: hex.EncodeToString(nonce), Binding: binding, Backend: side.backend})
	return binding, script, err
}

func scriptCost(ctx context.Context, url string, side backendSide) (scriptCosts, error) {
	var c scriptCosts
	proc, err := cdp.Launch(ctx, cdp.LaunchOptions{Headless: true, EnableNative: side.native, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return c, fmt.Errorf("launching the browser: %w", err)
	}
	defer proc.Close()
	binding, script, err := benchScript(side)
	if err != nil {
		return c, err
	}
	c.size = len(script)
	type tab struct {
		nav  func(ctx context.Context, url string) error
		sess *cdp.Session
		with bool
	}
	var tabs []tab
	for i, scripts := range [][]string{{observed, mark0, script, mark1}, {observed, mark0, mark1}} {
		sess, nav, err := instrumentedTab(ctx, proc.Conn(), binding, scripts)
		if err != nil {
			return c, err
		}
		tabs = append(tabs, tab{nav, sess, i == 0})
	}
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	for i := range scriptWarmup + scriptDocs {
		for j := range tabs {
			t := tabs[(i+j)%2] // alternate which goes first
			nctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			err := t.nav(nctx, url+sep+"p=s"+strconv.Itoa(i)+"_")
			cancel()
			if err != nil {
				return c, err
			}
			res, err := cdpt.Call(ctx, t.sess, cdpruntime.Evaluate, cdpruntime.EvaluateParams{Expression: readCost, ReturnByValue: ptrTrue()})
			if err != nil {
				return c, fmt.Errorf("reading the marks: %w", err)
			}
			var text string
			var v [2]float64
			if json.Unmarshal(res.Result.Value, &text) != nil || json.Unmarshal([]byte(text), &v) != nil {
				return c, fmt.Errorf("reading the marks: %s", res.Result.Value)
			}
			if i < scriptWarmup {
				continue
			}
			if t.with {
				c.with = append(c.with, msDuration(v[0]))
				c.observers = append(c.observers, msDuration(v[1]))
			} else {
				c.without = append(c.without, msDuration(v[0]))
			}
		}
	}
	return c, nil
}

func msDuration(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }

// The large page of the page-script rows: largeRows rows of a form without
// a toolname (a label, an input, a select and a textarea each) and
// largeItems list items (three elements each), then the bench page's ten
// tools: a long, form-heavy page that has no declarative tool.
const (
	largePath  = "/bench/large"
	largeRows  = 300
	largeItems = 2000
)

// largePage writes the large page.
func largePage(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	var b strings.Builder
	b.WriteString("<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>large bench page</title></head><body><form>")
	for i := range largeRows {
		fmt.Fprintf(&b, "<div><label for=i%d>Field %d</label><input id=i%d name=n%d value=v%d><select name=s%d><option>a<option>b<option>c</select><textarea name=t%d>x</textarea></div>\n", i, i, i, i, i, i, i)
	}
	b.WriteString("</form><ul>")
	for i := range largeItems {
		fmt.Fprintf(&b, "<li><span>item %d</span> <a href=#%d>link</a></li>\n", i, i)
	}
	b.WriteString(`<script>for (let i = 0; i < 10; i++) document.modelContext?.registerTool({name: "echo_" + i, description: "Return the text unchanged.", execute: async ({text}) => text});</script></body></html>`)
	io.WriteString(w, b.String())
}

// instrumentedTab opens a blank tab set up the way webmcp-cdp sets up one
// (Runtime.enable, a binding, Page.enable, scripts for new documents) and
// returns its session and a func that navigates it and returns at its load
// event.
func instrumentedTab(ctx context.Context, conn *cdp.Conn, binding string, scripts []string) (*cdp.Session, func(context.Context, string) error, error) {
	created, err := cdpt.Call(ctx, conn.Browser(), target.CreateTarget, target.CreateTargetParams{URL: "about:blank"})
	if err != nil {
		return nil, nil, fmt.Errorf("opening a tab: %w", err)
	}
	flatten := true
	att, err := cdpt.Call(ctx, conn.Browser(), target.AttachToTarget, target.AttachToTargetParams{TargetID: created.TargetID, Flatten: &flatten})
	if err != nil {
		return nil, nil, fmt.Errorf("attaching to a tab: %w", err)
	}
	sess := conn.Attach(att.SessionID)
	nav, err := instrumentSession(ctx, sess, binding, scripts)
	return sess, nav, err
}

// instrumentSession sets up sess, attached to a tab, as webmcp-cdp sets up
// one (Runtime.enable, the binding, Page.enable, the scripts), and returns
// its navigator.
func instrumentSession(ctx context.Context, sess *cdp.Session, binding string, scripts []string) (func(context.Context, string) error, error) {
	if _, err := cdpt.Call(ctx, sess, cdpruntime.Enable, cdpt.Empty{}); err != nil {
		return nil, fmt.Errorf("Runtime.enable: %w", err)
	}
	if _, err := cdpt.Call(ctx, sess, cdpruntime.AddBinding, cdpruntime.AddBindingParams{Name: binding}); err != nil {
		return nil, fmt.Errorf("Runtime.addBinding: %w", err)
	}
	nav, err := loadNavigator(ctx, sess)
	if err != nil {
		return nil, err
	}
	for _, s := range scripts {
		if _, err := cdpt.Call(ctx, sess, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: s}); err != nil {
			return nil, fmt.Errorf("Page.addScriptToEvaluateOnNewDocument: %w", err)
		}
	}
	return nav, nil
}

// loadNavigator turns on the Page domain of sess and returns a func that
// sends the tab to a URL (as a page script would) and returns at its load
// event; one goroutine at a time. The subscription lasts as long as the
// session.
func loadNavigator(ctx context.Context, sess *cdp.Session) (func(context.Context, string) error, error) {
	loads, _ := sess.Subscribe("Page.loadEventFired")
	if _, err := cdpt.Call(ctx, sess, page.Enable, page.EnableParams{}); err != nil {
		return nil, fmt.Errorf("Page.enable: %w", err)
	}
	return func(ctx context.Context, url string) error {
		for len(loads) > 0 {
			<-loads
		}
		expr := "location.href = " + strconv.Quote(url)
		if _, err := cdpt.Call(ctx, sess, cdpruntime.Evaluate, cdpruntime.EvaluateParams{Expression: expr}); err != nil {
			return fmt.Errorf("navigating: %w", err)
		}
		select {
		case <-loads:
			return nil
		case <-ctx.Done():
			return fmt.Errorf("navigating to %s: no load event: %w", url, ctx.Err())
		}
	}, nil
}

func ptrTrue() *bool { t := true; return &t }
