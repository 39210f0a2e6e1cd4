package relay

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/hub/relay/proxy"
)

// TabResult describes a tab in the answers of the tab methods.
type TabResult struct {
	TabID    int      `json:"tabId"`              // the hub's tab number
	URL      string   `json:"url"`                // the page shown
	Title    string   `json:"title,omitempty"`    // the page's title
	Active   bool     `json:"active,omitempty"`   // site-level tool names go to this tab first
	Selected bool     `json:"selected,omitempty"` // the asking connection's default tab
	Tools    []string `json:"tools"`              // the routed names that reach this tab
}

func (b *BrowserSide) tabResult(conn string, ti hub.TabInfo) TabResult {
	b.mu.Lock()
	sel := b.selected[conn] == ti.ID
	b.mu.Unlock()
	tools := ti.Tools
	if tools == nil {
		tools = []string{}
	}
	return TabResult{TabID: ti.N, URL: ti.URL, Title: ti.Title, Active: ti.Active, Selected: sel, Tools: tools}
}

// tabRef is the optional tab of a method's params.
type tabRef struct {
	TabID *int `json:"tabId,omitempty"`
}

// tab resolves the tab a method acts on: the one named, else the one this
// connection selected, else the active one, else the only one.
func (b *BrowserSide) tab(conn string, ref tabRef) (hub.TabInfo, error) {
	h := b.opts.Hub
	if ref.TabID != nil {
		if ti, ok := h.Tab(*ref.TabID); ok {
			return ti, nil
		}
		return hub.TabInfo{}, proxy.Errorf(proxy.CodeServerError, "No tab %d is open; getTabs lists the open tabs", *ref.TabID)
	}
	b.mu.Lock()
	sel := b.selected[conn]
	b.mu.Unlock()
	if sel != "" {
		if ti, ok := h.TabOf(sel); ok {
			return ti, nil
		}
	}
	tabs := h.Tabs()
	for _, ti := range tabs {
		if ti.Active {
			return ti, nil
		}
	}
	switch len(tabs) {
	case 0:
		return hub.TabInfo{}, proxy.Errorf(proxy.CodeServerError, "No tab is open: createTab opens one")
	case 1:
		return tabs[0], nil
	}
	return hub.TabInfo{}, proxy.Errorf(proxy.CodeServerError, "%d tabs are open: pass tabId, or selectTab first (getTabs lists them)", len(tabs))
}

// selectFor records the tab a connection acts on by default.
func (b *BrowserSide) selectFor(conn, tab string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.selected[conn]; !ok {
		b.selOrder = append(b.selOrder, conn)
		if len(b.selOrder) > maxSelections {
			delete(b.selected, b.selOrder[0])
			b.selOrder = b.selOrder[1:]
		}
	}
	b.selected[conn] = tab
}

type createTabParams struct {
	URL string `json:"url"`
}

func (b *BrowserSide) createTab(ctx context.Context, conn string, params json.RawMessage) (any, error) {
	var p createTabParams
	if err := decode("createTab", params, &p); err != nil {
		return nil, err
	}
	if p.URL == "" || p.URL == "about:blank" {
		return nil, proxy.Errorf(proxy.CodeInvalidParams, "Invalid params: createTab needs params.url (a page to open)")
	}
	return b.open(ctx, conn, p.URL)
}

// open opens url in a new tab, waits until the hub numbers it, and selects
// it for the connection.
func (b *BrowserSide) open(ctx context.Context, conn, url string) (any, error) {
	id, err := b.opts.Actions.Open(ctx, url)
	if err != nil {
		return nil, err
	}
	b.selectFor(conn, id)
	for {
		changed := b.opts.Hub.Changed()
		if ti, ok := b.opts.Hub.TabOf(id); ok {
			return b.tabResult(conn, ti), nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("the tab for %s opened but showed no page in time: %w", url, ctx.Err())
		case <-changed:
		}
	}
}

func (b *BrowserSide) getTabs(_ context.Context, conn string, _ json.RawMessage) (any, error) {
	tabs := b.opts.Hub.Tabs()
	out := make([]TabResult, 0, len(tabs))
	for _, ti := range tabs {
		out = append(out, b.tabResult(conn, ti))
	}
	return map[string]any{"tabs": out}, nil
}

func (b *BrowserSide) requiredTab(name string, conn string, params json.RawMessage) (hub.TabInfo, error) {
	var ref tabRef
	if err := decode(name, params, &ref); err != nil {
		return hub.TabInfo{}, err
	}
	if ref.TabID == nil {
		return hub.TabInfo{}, proxy.Errorf(proxy.CodeInvalidParams, "Invalid params: %s needs params.tabId (getTabs lists the tabs)", name)
	}
	return b.tab(conn, ref)
}

func (b *BrowserSide) selectTab(_ context.Context, conn string, params json.RawMessage) (any, error) {
	ti, err := b.requiredTab("selectTab", conn, params)
	if err != nil {
		return nil, err
	}
	b.selectFor(conn, ti.ID)
	return b.tabResult(conn, ti), nil
}

func (b *BrowserSide) activateTab(ctx context.Context, conn string, params json.RawMessage) (any, error) {
	ti, err := b.optionalTab("activateTab", conn, params)
	if err != nil {
		return nil, err
	}
	if err := b.opts.Actions.ActivateTab(ctx, ti.ID); err != nil {
		return nil, err
	}
	b.opts.Hub.SetActive(ti.ID)
	b.selectFor(conn, ti.ID)
	ti, _ = b.opts.Hub.TabOf(ti.ID)
	return b.tabResult(conn, ti), nil
}

func (b *BrowserSide) optionalTab(name, conn string, params json.RawMessage) (hub.TabInfo, error) {
	var ref tabRef
	if err := decode(name, params, &ref); err != nil {
		return hub.TabInfo{}, err
	}
	return b.tab(conn, ref)
}

func (b *BrowserSide) closeTab(ctx context.Context, conn string, params json.RawMessage) (any, error) {
	ti, err := b.optionalTab("closeTab", conn, params)
	if err != nil {
		return nil, err
	}
	if err := b.opts.Actions.CloseTab(ctx, ti.ID); err != nil {
		return nil, err
	}
	b.mu.Lock()
	if b.selected[conn] == ti.ID {
		b.selected[conn] = ""
	}
	b.mu.Unlock()
	return map[string]any{"closed": true, "tabId": ti.N}, nil
}

type navigateParams struct {
	tabRef
	URL string `json:"url"`
}

func (b *BrowserSide) navigate(ctx context.Context, conn string, params json.RawMessage) (any, error) {
	var p navigateParams
	if err := decode("browser_navigate", params, &p); err != nil {
		return nil, err
	}
	if p.URL == "" {
		return nil, proxy.Errorf(proxy.CodeInvalidParams, "Invalid params: browser_navigate needs params.url")
	}
	if p.TabID == nil && len(b.opts.Hub.Tabs()) == 0 {
		// Nothing to navigate: open the page instead.
		return b.open(ctx, conn, p.URL)
	}
	ti, err := b.tab(conn, p.tabRef)
	if err != nil {
		return nil, err
	}
	if err := b.opts.Actions.NavigateAndWait(ctx, ti.ID, p.URL); err != nil {
		return nil, err
	}
	return map[string]any{"tabId": ti.N, "url": p.URL}, nil
}

func (b *BrowserSide) goBack(ctx context.Context, conn string, params json.RawMessage) (any, error) {
	return b.history(ctx, conn, "goBack", params, b.opts.Actions.GoBack)
}

func (b *BrowserSide) goForward(ctx context.Context, conn string, params json.RawMessage) (any, error) {
	return b.history(ctx, conn, "goForward", params, b.opts.Actions.GoForward)
}

func (b *BrowserSide) history(ctx context.Context, conn, name string, params json.RawMessage, do func(context.Context, string) (string, error)) (any, error) {
	ti, err := b.optionalTab(name, conn, params)
	if err != nil {
		return nil, err
	}
	url, err := do(ctx, ti.ID)
	if err != nil {
		return nil, err
	}
	return map[string]any{"tabId": ti.N, "url": url}, nil
}
