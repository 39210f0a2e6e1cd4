package mcpserver

import (
	"context"
	"slices"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
)

// openQuiet is how long a new tab's tools must stay the same before
// webmcp_open_tab reports them: pages often register tools in several steps.
const openQuiet = 150 * time.Millisecond

// waitTools waits until the tab has tools and they stayed the same for
// openQuiet, or until wait passes or ctx ends, and describes the tab as it
// is then.
func (s *Server) waitTools(ctx context.Context, id string, wait time.Duration) hub.TabInfo {
	return waitTabTools(ctx, s.hub.Changed, func() (hub.TabInfo, bool) { return s.hub.TabOf(id) }, openQuiet, wait)
}

// waitTabTools is waitTools over a hub's Changed and a read of the tab. It
// reads the tab when changed's channel closes and once more when a quiet
// period ends; the quiet period restarts whenever the tab's tools differ.
// Its timers only bound the wait.
func waitTabTools(ctx context.Context, changed func() <-chan struct{}, read func() (hub.TabInfo, bool), quiet, wait time.Duration) hub.TabInfo {
	bound := time.NewTimer(wait)
	defer bound.Stop()
	still := time.NewTimer(quiet)
	defer still.Stop()
	var last hub.TabInfo
	quietOver := false
	for {
		next := changed() // before the read: a change after it is not missed
		if ti, ok := read(); ok {
			if !slices.Equal(ti.Tools, last.Tools) {
				still.Reset(quiet)
				quietOver = false
			}
			last = ti
		}
		if quietOver && len(last.Tools) > 0 {
			return last
		}
		select {
		case <-ctx.Done():
			return last
		case <-bound.C:
			return last
		case <-next:
		case <-still.C:
			quietOver = true
		}
	}
}
