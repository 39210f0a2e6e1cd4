package relay

import (
	"context"
	"encoding/json"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// Hub is what the browser side needs of the hub: the routed tools and a way
// to call them, the open tabs, and the catalog's version with a signal when
// it changes. *hub.Hub has it; the browser side's tests use a fake.
type Hub interface {
	// Version is the catalog's version; it changes with every change of the
	// routed tools or of the tabs.
	Version() uint64
	// Changed returns a channel closed at the next change (see
	// hub.Hub.Changed): read what you need after taking it.
	Changed() <-chan struct{}
	// Tools lists the routed tools.
	Tools() []hub.RoutedTool
	// Call calls a routed tool; every failure is in the outcome.
	Call(ctx context.Context, name string, args json.RawMessage) core.Outcome
	// Tabs lists the open tabs, by number.
	Tabs() []hub.TabInfo
	// Tab returns the tab numbered n.
	Tab(n int) (hub.TabInfo, bool)
	// TabOf returns the tab with the browser's id.
	TabOf(id string) (hub.TabInfo, bool)
	// SetActive makes a tab the one site-level names go to first.
	SetActive(id string)
}

// *hub.Hub is the Hub the commands pass.
var _ Hub = (*hub.Hub)(nil)
