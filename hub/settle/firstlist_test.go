package settle

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// fakeBrowser drains tabs and waits for the open ones as a test says.
type fakeBrowser struct {
	clock   *simClock // nil: drains are not timed
	drained [][]string
	at      []time.Time // when each drain began
	// readErr is SettleExisting's error; block makes it wait for ctx.
	readErr error
	block   bool
}

func (b *fakeBrowser) DrainTabs(_ context.Context, tabs []string) {
	b.drained = append(b.drained, tabs)
	if b.clock != nil {
		b.at = append(b.at, b.clock.Now())
	}
}

func (b *fakeBrowser) SettleExisting(ctx context.Context) (int, error) {
	if b.block {
		<-ctx.Done()
		return 0, ctx.Err()
	}
	return 3, b.readErr
}

// fakeListing counts Synced and fails it as a test says.
type fakeListing struct {
	synced int
	block  bool
}

func (l *fakeListing) Synced(ctx context.Context) error {
	l.synced++
	if l.block {
		<-ctx.Done()
		return ctx.Err()
	}
	return nil
}

// TestStartPagesRun: the first list's wait drains the start tabs once they
// loaded and were quiet, and not at all with --wait-tools 0.
func TestStartPagesRun(t *testing.T) {
	for _, tc := range []struct {
		name       string
		wait       time.Duration
		wantDrains int
	}{
		{"settles", 10 * time.Second, 1},
		{"--wait-tools 0 does not wait", 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t0 := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
			clock := newSimClock(t0)
			regs := NewRegistrations(clock)
			clock.at(t0.Add(300*time.Millisecond), func() bool { regs.Loaded("A"); return true })
			clock.at(t0.Add(900*time.Millisecond), func() bool {
				return regs.note(core.Source{Key: "A/doc", Tab: "A"}, toolList("x"), nil, clock.Now())
			})
			b := &fakeBrowser{clock: clock}
			StartPages{Tabs: []string{"A"}, Regs: regs, Browser: b, Quiet: 1500 * time.Millisecond, Wait: tc.wait,
				Tools: func() int { return 1 }, Clock: clock}.Run(context.Background())
			if len(b.drained) != tc.wantDrains {
				t.Fatalf("drained %v, want %d drains", b.drained, tc.wantDrains)
			}
			if tc.wantDrains > 0 && (!slices.Equal(b.drained[0], []string{"A"}) || !b.at[0].Equal(t0.Add(2400*time.Millisecond))) {
				t.Errorf("drained %v at %s, want [A] at 2.4 s", b.drained, b.at[0].Sub(t0))
			}
		})
	}
}

// TestExisting: attach's open tabs release the list once SettleExisting
// returned and the listing synced; a failed read skips the sync; a sync
// that does not come ends at --wait-tools.
func TestExisting(t *testing.T) {
	for _, tc := range []struct {
		name       string
		browser    fakeBrowser
		listing    fakeListing
		wait       time.Duration
		wantSynced int
	}{
		{name: "read and listed", wait: 10 * time.Second, wantSynced: 1},
		{name: "the read failed", browser: fakeBrowser{readErr: errors.New("lost a tab")}, wait: 10 * time.Second},
		{name: "the read does not end", browser: fakeBrowser{block: true}, wait: 50 * time.Millisecond},
		{name: "the listing does not sync", listing: fakeListing{block: true}, wait: 50 * time.Millisecond, wantSynced: 1},
		{name: "--wait-tools 0 does not wait", wait: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			Existing(context.Background(), &tc.browser, &tc.listing, tc.wait)
			if tc.listing.synced != tc.wantSynced {
				t.Errorf("synced %d times, want %d", tc.listing.synced, tc.wantSynced)
			}
		})
	}
}
