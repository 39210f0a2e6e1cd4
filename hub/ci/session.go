package ci

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/hub/mcpserver"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// Tool is a page's tool as CI mode reports it: the page's own definition
// (without the provenance tag the hub puts in front of descriptions), the
// name MCP clients see, or the reason webmcp-cdp refused it.
type Tool struct {
	// Name is the page's own name for the tool.
	Name string `json:"name"`
	// Routed is the name MCP clients see; empty for a refused tool.
	Routed string `json:"routed,omitempty"`
	// Title is the page's optional title.
	Title string `json:"title,omitempty"`
	// Description is the page's description (unknown for a refused tool).
	Description string `json:"description"`
	// InputSchema is the page's inputSchema, or nil when it gave none.
	InputSchema json.RawMessage `json:"inputSchema,omitempty"`
	// Annotations are the page's hints.
	Annotations map[string]any `json:"annotations,omitempty"`
	// URL is the document that registered the tool (a frame's, for a tool of
	// an iframe).
	URL string `json:"url,omitempty"`
	// Refused says why webmcp-cdp did not serve the tool; empty when it did.
	Refused string `json:"refused,omitempty"`
	// Reason is the code of the refusal (see core.Reason); empty for a
	// served tool.
	Reason core.Reason `json:"reason,omitempty"`
}

// Tabs opens and closes browser tabs; cmd/webmcp-cdp adapts *cdp.Browser.
type Tabs interface {
	// Open opens url in a new tab and returns the tab's id. When it fails
	// after the tab opened, it returns the tab's id with the error.
	Open(ctx context.Context, url string) (string, error)
	// CloseTab closes a tab.
	CloseTab(ctx context.Context, tab string) error
}

// CallFunc calls a routed tool as an MCP client would.
type CallFunc func(ctx context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, error)

// Session opens pages one at a time in a browser whose tools reach Hub.
// Set the fields before the first Open; a Session is then used by one
// goroutine at a time.
type Session struct {
	// Hub is the catalog the browser reports into.
	Hub *hub.Hub
	// Tabs opens and closes the tabs.
	Tabs Tabs
	// Call runs a routed tool. When nil, calls go to Hub.Call directly; the
	// commands set it to an MCP client on the server, so that a call takes
	// the same path as a real client's.
	Call CallFunc
	// Settle is how long a page's tools must stay the same to count as
	// settled (default 300 ms).
	Settle time.Duration
	// SettleTimeout bounds the wait for a page's tools (default 10 s).
	SettleTimeout time.Duration
}

// Page is a page opened by a Session, with its tools as they settled.
type Page struct {
	// URL is the URL that was opened.
	URL string
	// Tools are the page's tools, served and refused, sorted by name.
	Tools []Tool
	// Settled is false when the wait ended at SettleTimeout: the page
	// registered no tools, or its tools kept changing.
	Settled bool
	// Took is how long the page took to settle.
	Took time.Duration

	s   *Session
	tab string
	// reads counts the reads of the hub while the page settled; the tests
	// use it to tell waiting on the hub's changes from polling.
	reads int
}

// Open opens url in a new tab and waits for its tools to settle. It fails
// when the page cannot be loaded (its tab is then closed) or ctx ends; a
// page without tools is a Page without tools.
func (s *Session) Open(ctx context.Context, url string) (*Page, error) {
	settle, limit := s.Settle, s.SettleTimeout
	if settle <= 0 {
		settle = 300 * time.Millisecond
	}
	if limit <= 0 {
		limit = 10 * time.Second
	}
	_, mark := s.Hub.Refusals(0)
	start := time.Now()
	tab, err := s.Tabs.Open(ctx, url)
	if err != nil {
		if tab != "" {
			s.Tabs.CloseTab(context.WithoutCancel(ctx), tab)
		}
		return nil, fmt.Errorf("loading %s: %w", url, err)
	}
	p := &Page{URL: url, s: s, tab: tab}
	if err := p.settle(ctx, mark, settle, limit-time.Since(start)); err != nil {
		p.Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("waiting for the tools of %s: %w", url, err)
	}
	p.Took = time.Since(start)
	return p, nil
}

// settle waits until the hub knows the page's tab, the tab has tools
// (served or refused), and they stayed the same for quiet; or until limit
// passes, leaving Settled false. It reads the page's tools when the hub
// signals a change and once more when a quiet period ends (which also
// catches a change the hub does not signal, such as a refusal alone); the
// quiet period restarts on every change of the page's tools. Its timers
// only bound the wait. It returns the cause when ctx ends.
func (p *Page) settle(ctx context.Context, mark uint64, quiet, limit time.Duration) error {
	bound := time.NewTimer(limit)
	defer bound.Stop()
	still := time.NewTimer(quiet)
	defer still.Stop()
	var lastKnown, quietOver bool
	for {
		changed := p.s.Hub.Changed() // before the read: a change after it is not missed
		tools, known := p.read(mark)
		if known != lastKnown || !reflect.DeepEqual(tools, p.Tools) {
			p.Tools, lastKnown = tools, known
			still.Reset(quiet)
			quietOver = false
		}
		if quietOver && known && len(tools) > 0 {
			p.Settled = true
			return nil
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-bound.C:
			return nil
		case <-changed:
		case <-still.C:
			quietOver = true
		}
	}
}

// read returns the tools of the page's tab, served and refused, and whether
// the hub knows the tab yet.
func (p *Page) read(mark uint64) ([]Tool, bool) {
	p.reads++
	ti, ok := p.s.Hub.TabOf(p.tab)
	var out []Tool
	if ok {
		out = tabTools(p.s.Hub.Tools(), ti.N)
	}
	type key struct {
		tool   string
		reason core.Reason
		detail string
	}
	seen := make(map[key]bool)
	refused, _ := p.s.Hub.Refusals(mark)
	for _, r := range refused {
		if r.Tab != p.tab {
			continue
		}
		if k := (key{r.Tool, r.Reason, r.Detail}); !seen[k] {
			seen[k] = true
			out = append(out, Tool{Name: r.Tool, URL: r.URL, Refused: r.Detail, Reason: r.Reason})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, ok
}

// tabTools picks the tools of tab n out of the routed tools. A tool shared
// by several tabs or frames is listed under the name that reaches this very
// document (<site>_tab<N>_...), else under the site-level name.
func tabTools(routed []hub.RoutedTool, n int) []Tool {
	type key struct{ tool, url, frame string }
	byKey := make(map[key]Tool)
	var order []key
	perTab := fmt.Sprintf("_tab%d_", n)
	for _, rt := range routed {
		src := rt.Source
		if src.Cached || src.Tab != n {
			continue
		}
		name, url := src.Tool, src.URL
		k := key{name, url, src.Frame}
		old, seen := byKey[k]
		if seen && !(strings.Contains(rt.Name, perTab) && !strings.Contains(old.Routed, perTab)) {
			continue
		}
		if !seen {
			order = append(order, k)
		}
		byKey[k] = Tool{
			Name:        name,
			Routed:      rt.Name,
			Title:       rt.Tool.Title,
			Description: rt.Tool.Description,
			InputSchema: rt.Tool.InputSchema,
			Annotations: rt.Tool.Annotations,
			URL:         url,
		}
	}
	out := make([]Tool, 0, len(order))
	for _, k := range order {
		out = append(out, byKey[k])
	}
	return out
}

// Tool returns the page's tool with the page's own name, or, failing that,
// with the routed name. A served tool wins over a refused one.
func (p *Page) Tool(name string) (Tool, bool) {
	var refused *Tool
	for i, t := range p.Tools {
		if t.Name == name {
			if t.Refused == "" {
				return t, true
			}
			refused = &p.Tools[i]
		}
	}
	for _, t := range p.Tools {
		if t.Routed != "" && t.Routed == name {
			return t, true
		}
	}
	if refused != nil {
		return *refused, true
	}
	return Tool{}, false
}

// Names lists the names of the page's served tools.
func (p *Page) Names() []string {
	var out []string
	for _, t := range p.Tools {
		if t.Refused == "" {
			out = append(out, t.Name)
		}
	}
	return out
}

// ErrNoTool is the error (for errors.Is) of a call to a tool the page does
// not serve.
var ErrNoTool = errors.New("no such tool")

// noToolError says which tool is missing and what the page has instead.
type noToolError struct{ msg string }

func (e noToolError) Error() string        { return e.msg }
func (e noToolError) Is(target error) bool { return target == ErrNoTool }

func noTool(format string, args ...any) error {
	return noToolError{msg: fmt.Sprintf(format, args...)}
}

// Call calls the page's tool name (the page's own name, or the routed name)
// with args, a JSON object (empty for none). A tool that fails is a result
// with IsError set; the error is for a call that could not be made.
func (p *Page) Call(ctx context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	t, ok := p.Tool(name)
	switch {
	case !ok:
		have := p.Names()
		if len(have) == 0 {
			return nil, noTool("the page has no tool %q (it has no tools)", name)
		}
		return nil, noTool("the page has no tool %q; it has %s", name, strings.Join(have, ", "))
	case t.Refused != "":
		return nil, noTool("webmcp-cdp refused the page's tool %q: %s", name, t.Refused)
	}
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	if p.s.Call != nil {
		res, err := p.s.Call(ctx, t.Routed, args)
		if err != nil {
			return nil, fmt.Errorf("calling %s: %w", t.Routed, err)
		}
		return res, nil
	}
	return mcpserver.CallToolResult(p.s.Hub.Call(ctx, t.Routed, args)), nil
}

// forgetWait bounds Close's wait for the hub to let go of a closed tab, in
// case the browser never reports the tab gone.
const forgetWait = 2 * time.Second

// Close closes the page's tab and waits until the hub has let go of its
// tools, so that the next page's tools do not share names with this one's.
// It wakes on the hub's changes, and gives up waiting (without an error)
// after forgetWait.
func (p *Page) Close(ctx context.Context) error {
	if err := p.s.Tabs.CloseTab(ctx, p.tab); err != nil {
		return err
	}
	bound := time.NewTimer(forgetWait)
	defer bound.Stop()
	for {
		changed := p.s.Hub.Changed()
		// A tab the hub still knows but that has no tools holds no names:
		// there is nothing to wait for (and the hub signals no change when
		// such a tab goes).
		if ti, ok := p.s.Hub.TabOf(p.tab); !ok || len(ti.Tools) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-bound.C:
			return nil
		case <-changed:
		}
	}
}
