package cdp

import "context"

// This file holds the wait for the tabs that were open before we attached:
// until each one is set up and each of its documents has been read.
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

// progressLocked wakes SettleExisting: a setup or a read ended, or a
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
	for {
		b.mu.Lock()
		waiting := b.unreadLocked(tabs)
		progress := b.progress
		b.mu.Unlock()
		if waiting == 0 {
			// What those reads found is queued for the sink: wait until
			// it is handed over.
			if err := b.sink.flush(ctx); err != nil {
				return len(tabs), err
			}
			return len(tabs), nil
		}
		select {
		case <-progress:
		case <-ctx.Done():
			return len(tabs), ctx.Err()
		case <-b.conn.Done():
			return len(tabs), ErrClosed
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
