package mcpserver

import (
	"context"
	"slices"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
)

// openQuiet is how long a new tab's tools must stay the same before
// webmcp_open_tab and webmcp_reload_tab report them: pages often register
// tools in several steps.
const openQuiet = 150 * time.Millisecond

// defaultToolWait is how long webmcp_open_tab and webmcp_reload_tab wait for
// a page's tools unless told otherwise; maxToolWait bounds what they may be
// told.
const (
	defaultToolWait = 5 * time.Second
	maxToolWait     = 30 * time.Second
)

// reloadArgs are webmcp_reload_tab's arguments.
type reloadArgs struct {
	Tab    int `json:"tab" jsonschema:"the tab number, as webmcp_list_tabs shows it"`
	WaitMS int `json:"wait_ms,omitempty" jsonschema:"how long to wait for the page to load and its tools to come back, in milliseconds (default 5000, at most 30000)"`
}

// toolWait turns a wait_ms argument into the wait.
func toolWait(ms int) time.Duration {
	if ms <= 0 {
		return defaultToolWait
	}
	return min(time.Duration(ms)*time.Millisecond, maxToolWait)
}

// waitTools waits until the tab's tools stayed the same for openQuiet (and,
// with needTools, the tab has some), or until wait passes or ctx ends, and
// describes the tab as it is then; false when the tab is not open then.
// wasOpen says the hub knew the tab before (a reload): its closing then
// ends the wait even if no read saw it open.
func (s *Server) waitTools(ctx context.Context, id string, wait time.Duration, needTools, wasOpen bool) (hub.TabInfo, bool) {
	waitTabTools(ctx, s.hub.Changed, func() (hub.TabInfo, bool) { return s.hub.TabOf(id) }, openQuiet, wait, needTools, wasOpen)
	return s.hub.TabOf(id)
}

// waitTabTools is waitTools over a hub's Changed and a read of the tab. It
// reads the tab when changed's channel closes and once more when a quiet
// period ends; the quiet period restarts whenever the tab's tools differ.
// A tab that was read once (or wasOpen) and then is gone (closed) ends the
// wait at once.
// Its timers only bound the wait.
func waitTabTools(ctx context.Context, changed func() <-chan struct{}, read func() (hub.TabInfo, bool), quiet, wait time.Duration, needTools, wasOpen bool) hub.TabInfo {
	bound := time.NewTimer(wait)
	defer bound.Stop()
	still := time.NewTimer(quiet)
	defer still.Stop()
	var last hub.TabInfo
	quietOver, seen := false, wasOpen
	for {
		next := changed() // before the read: a change after it is not missed
		ti, ok := read()
		switch {
		case ok:
			if !slices.Equal(ti.Tools, last.Tools) {
				still.Reset(quiet)
				quietOver = false
			}
			last, seen = ti, true
		case seen:
			return last
		}
		if quietOver && (len(last.Tools) > 0 || !needTools) {
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
