package cdp

import (
	"context"
	"fmt"
	"sync"
	"time"

	cdpt "github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/runtime"
)

// This file holds the wait for the tabs that were open before we attached
// (until each one is set up and each of its documents has been read), and
// Drain, which waits for what a page had due when a quiet period ended.
//
// Chrome announces every target it has with an attachedToTarget event
// before it answers Target.setAutoAttach (checked on Chromium 156 with 31
// tabs: all 31 events came before the answer), and the reader hands events
// to onAttached in order, so the targets followed when that answer is read
// are exactly the tabs open at attach. No target list is asked for and no
// grace is waited for a listed target that never attaches: a tab opened
// after attach is not "open before attach", and is followed as any new
// tab is.

// noteExisting records the tabs followed when auto-attach answered.
func (b *Browser) noteExisting() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.existing = b.existing[:0]
	for _, t := range b.targets {
		if t.kind == "page" && t.tab == t.targetID {
			b.existing = append(b.existing, t)
		}
	}
}

// progressLocked wakes waitRead: a setup or a read ended, or a
// target or document went. b.mu is held.
func (b *Browser) progressLocked() {
	close(b.progress)
	b.progress = make(chan struct{})
}

// SettleExisting waits until the tabs that were open when Start ran are
// attached and set up (their native tools replayed, the page script run in
// their documents) and every document of theirs (frames' targets too) has
// been read: its bridge adopted, its first list and any refresh asked for
// meanwhile handed to the sink. It wakes on each such step, never on a
// clock; ctx bounds the whole wait (a setup that never answers would
// otherwise hold it for setupTimeout). It returns how many tabs it waited
// for. Tools a page registers later, and MCP-B page servers (their client
// session takes several round trips of its own), come with list_changed.
func (b *Browser) SettleExisting(ctx context.Context) (int, error) {
	b.mu.Lock()
	tabs := make(map[string]bool, len(b.existing))
	for _, t := range b.existing {
		tabs[t.tab] = true
	}
	b.mu.Unlock()
	return len(tabs), b.waitRead(ctx, tabs)
}

// waitRead waits until the targets of tabs are set up, their documents'
// reads (and any asked for meanwhile) are done, and what the reads found
// is handed to the sink. It wakes on each such step, never on a clock.
func (b *Browser) waitRead(ctx context.Context, tabs map[string]bool) error {
	for {
		b.mu.Lock()
		waiting := b.unreadLocked(tabs)
		progress := b.progress
		b.mu.Unlock()
		if waiting == 0 {
			// What those reads found is queued for the sink: wait until
			// it is handed over.
			return b.sink.flush(ctx)
		}
		select {
		case <-progress:
		case <-ctx.Done():
			return ctx.Err()
		case <-b.conn.Done():
			return ErrClosed
		}
	}
}

// unreadLocked counts the targets of tabs (the tabs themselves and the
// frames in them) still being set up, and their documents still being
// read. b.mu is held.
func (b *Browser) unreadLocked(tabs map[string]bool) int {
	n := 0
	for _, t := range b.targets {
		if !tabs[t.tab] {
			continue
		}
		select {
		case <-t.ready:
		default:
			n++
			continue
		}
		for _, d := range t.contexts {
			if d.alive && (d.adopting || d.busy || d.queued > 0) {
				n++
			}
		}
	}
	return n
}

// drainTask answers behind the page's due timers: Chromium queues a
// setTimeout of 0 and one with a delay apart, so it waits for one of each,
// in turn (a timer due before it in either queue runs first).
const drainTask = "new Promise(r => setTimeout(() => setTimeout(r, 1)))"

// drainWait bounds Drain: a page busy this long, or stuck in a dialog, is
// not waited for any longer.
const drainWait = 5 * time.Second

// Drain returns once what a tab's page had due when it was called has
// reached the sink. It runs a task in the tab's main document behind the
// page's timers that are due (on a busy renderer a timer can run long after
// its time, and the tools it registers with it), so that the change those
// timers made has pinged by the time the task answers; then it waits for
// the reads those pings asked for (waitRead). Frames in other processes
// (cross-site iframes, targets of their own) get the task too. Task order
// decides, not a clock: CI mode and the first tools/list call it when a
// quiet period ends, so a page whose timer fired late on a starved machine
// is still read before its tools count as settled. The page's own
// setTimeout is used (a page that replaced it gets a weaker wait, never a
// longer one), bounded by drainWait.
func (b *Browser) Drain(ctx context.Context, tab string) error {
	err := b.drain(ctx, tab)
	if err != nil {
		b.logger.Debug("a page's due work was not waited for", "tab", tab, "err", err)
	}
	return err
}

// DrainTabs drains tabs, all at once (Drain), and returns when each has
// answered or given up; a tab that did not answer is logged by Drain.
func (b *Browser) DrainTabs(ctx context.Context, tabs []string) {
	var wg sync.WaitGroup
	for _, tab := range tabs {
		wg.Go(func() { _ = b.Drain(ctx, tab) })
	}
	wg.Wait()
}

func (b *Browser) drain(ctx context.Context, tab string) error {
	ctx, cancel := context.WithTimeout(ctx, drainWait)
	defer cancel()
	s, err := b.readyTab(ctx, tab)
	if err != nil {
		return fmt.Errorf("draining tab %s: %w", tab, err)
	}
	// The frames of other processes (their own targets) run their timers
	// apart from the tab's: each gets the task too, at the same time. A
	// frame that goes meanwhile is no error; the tab's own document is.
	var frames []*Session
	b.mu.Lock()
	for _, t := range b.targets {
		if t.tab != tab || t.kind != "iframe" {
			continue
		}
		select {
		case <-t.ready: // set up: its document has the page script
			frames = append(frames, t.sess)
		default:
		}
	}
	b.mu.Unlock()
	var wg sync.WaitGroup
	for _, fs := range frames {
		wg.Go(func() { _ = runDrainTask(ctx, fs) })
	}
	err = runDrainTask(ctx, s)
	wg.Wait()
	if err != nil {
		return fmt.Errorf("draining tab %s: the page did not run a task: %w", tab, err)
	}
	if err := b.waitRead(ctx, map[string]bool{tab: true}); err != nil {
		return fmt.Errorf("draining tab %s: its reads did not end: %w", tab, err)
	}
	return nil
}

// runDrainTask runs drainTask in the main document of s's target.
func runDrainTask(ctx context.Context, s *Session) error {
	_, err := cdpt.Call(ctx, s, runtime.Evaluate, runtime.EvaluateParams{
		Expression: drainTask, AwaitPromise: ptr(true), ReturnByValue: ptr(true),
	})
	return err
}
