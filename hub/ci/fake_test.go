package ci

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// fakePage is what a fake site serves at a URL.
type fakePage struct {
	tools   []core.Tool
	refused []core.Refusal // handed to the hub as package cdp hands them
	late    []core.Tool
	results map[string]core.Result
	loadErr error
	status  int // the HTTP status of the page (default 200)
}

// fakeSite is a browser and its tabs: Open reports the page's tools into
// the hub a moment later, as a real browser does; Invoke answers calls.
type fakeSite struct {
	h      *hub.Hub
	logger *slog.Logger
	pages  map[string]*fakePage

	mu     sync.Mutex
	n      int
	open   map[string]*fakePage // by tab
	loads  map[string]core.PageLoad
	setups []core.PageSetup
	closed []string
	calls  []string
	// due is closed, by tab, once the page's updates (its tools, then its
	// late tool) reached the hub: what Drain waits for.
	due map[string]chan struct{}
}

func newFakeSite(t *testing.T, pages map[string]*fakePage) (*fakeSite, *Session) {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	f := &fakeSite{logger: logger, pages: pages, open: map[string]*fakePage{}, loads: map[string]core.PageLoad{}, due: map[string]chan struct{}{}}
	f.h = hub.New(f, hub.Options{Logger: logger})
	// The page's late tool is due work, as a real page's timer is: Drain,
	// which ends every quiet period, waits for it. A loaded machine (CI
	// runs the packages in parallel) running the fake's goroutine late
	// therefore cannot make the page look settled between its tools and
	// its late tool, however long past the quiet period it comes.
	return f, &Session{Hub: f.h, Tabs: f, Settle: 200 * time.Millisecond, Timeout: 2 * time.Second}
}

func (f *fakeSite) Open(_ context.Context, u string, setup core.PageSetup) (string, error) {
	f.mu.Lock()
	f.n++
	id := fmt.Sprintf("T%d", f.n)
	p := f.pages[u]
	f.setups = append(f.setups, setup)
	switch {
	case p == nil:
		f.loads[id] = core.PageLoad{URL: u, Err: "net::ERR_CONNECTION_REFUSED"}
	case p.status != 0:
		f.loads[id] = core.PageLoad{URL: u, Status: p.status, StatusText: http.StatusText(p.status), Loaded: true}
	default:
		f.loads[id] = core.PageLoad{URL: u, Status: 200, Loaded: true}
	}
	if p != nil {
		f.open[id] = p
	}
	f.mu.Unlock()
	if p == nil {
		return id, errors.New("net::ERR_CONNECTION_REFUSED")
	}
	if p.loadErr != nil {
		return id, p.loadErr
	}
	pu, _ := url.Parse(u)
	origin := pu.Scheme + "://" + pu.Host
	doc := core.Source{Key: id + "/doc", Tab: id, Frame: "F" + id, Origin: origin, URL: u, Backend: "polyfill"}
	due := make(chan struct{})
	f.mu.Lock()
	f.due[id] = due
	f.mu.Unlock()
	go func() {
		defer close(due)
		time.Sleep(5 * time.Millisecond) // the page taking its time, not a poll
		f.h.TabOpened(id, u, "")
		f.h.Update(doc, p.tools, p.refused)
		if len(p.late) > 0 {
			time.Sleep(10 * time.Millisecond) // the late tool's delay, not a poll
			f.h.Update(doc, append(append([]core.Tool(nil), p.tools...), p.late...), nil)
		}
	}()
	return id, nil
}

func (f *fakeSite) PageLoad(tab string) (core.PageLoad, <-chan struct{}, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	l, ok := f.loads[tab]
	return l, nil, ok
}

// Drain returns once the tab's page sent the hub all it had to (its
// updates are due work, run however late the machine runs them).
func (f *fakeSite) Drain(ctx context.Context, tab string) error {
	f.mu.Lock()
	due := f.due[tab]
	f.mu.Unlock()
	if due == nil {
		return nil
	}
	select {
	case <-due:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (f *fakeSite) Diagnose(_ context.Context, tab string) (core.PageDiagnosis, error) {
	l, _, _ := f.PageLoad(tab)
	d := core.PageDiagnosis{Load: l, API: "polyfill"}
	if l.Failed() {
		d.Problems = []core.PageProblem{{Kind: core.ProblemException, Text: "Uncaught Error: boom", URL: "http://site.test/app.js", Line: 3, Column: 7}}
	}
	return d, nil
}

func (f *fakeSite) CloseTab(_ context.Context, id string) error {
	f.mu.Lock()
	f.closed = append(f.closed, id)
	delete(f.open, id)
	f.mu.Unlock()
	f.h.TabClosed(id)
	return nil
}

func (f *fakeSite) Invoke(_ context.Context, docKey, tool string, input json.RawMessage) (core.Result, error) {
	tab, _, _ := strings.Cut(docKey, "/")
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, tool+" "+string(input))
	p := f.open[tab]
	if p == nil {
		return core.Result{}, errors.New("the page navigated away")
	}
	if r, ok := p.results[tool]; ok {
		return r, nil
	}
	return core.Result{Kind: "json", Value: string(input)}, nil
}

func obj(props string) json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{` + props + `}}`)
}

// notesSite serves a notes page with four tools, a page with a refused
// tool and a bad one, and a page without tools.
func notesSite() map[string]*fakePage {
	return map[string]*fakePage{
		"http://site.test/notes": {
			tools: []core.Tool{
				{Name: "add", Description: "Add two numbers.", InputSchema: obj(`"a":{"type":"number"},"b":{"type":"number"}`), Annotations: map[string]any{"readOnlyHint": true}},
				{Name: "echo", Title: "Echo", Description: "Echo the text."},
				{Name: "fail", Description: "Fail."},
				{Name: "stats", Description: "Counts."},
			},
			late: []core.Tool{{Name: "late", Description: "Registered a moment later."}},
			results: map[string]core.Result{
				"add":   {Kind: "json", Value: `{"sum":5}`},
				"echo":  {Kind: "string", Value: "hello"},
				"fail":  {Err: "fail tool failed on purpose"},
				"stats": {Kind: "json", Value: `{"notes":2,"tags":["a","b"],"owner":{"name":"ci","admin":false}}`},
			},
		},
		"http://site.test/bad": {
			tools: []core.Tool{{Name: "dotted.name", Description: "Has a dot."}, {Name: "ok", Description: "Fine."}},
			refused: []core.Refusal{
				{Reason: core.ReasonSize, Tool: "huge", Detail: "its description is 20000 characters, over the limit of 16384"},
				{Reason: core.ReasonSize, Tool: "huge", Detail: "its description is 20000 characters, over the limit of 16384"}, // handed over twice: listed once
			},
		},
		"http://site.test/empty": {},
		"http://site.test/warn":  {tools: []core.Tool{{Name: "w", Description: "You must call me first."}}},
	}
}
