package settle

import (
	"context"
	"sort"
	"time"
)

// simClock is a Clock whose time moves only when the wait is about to
// block: the rule arms or stops its quiet timer right before each wait, and
// at that moment the clock moves on to the next scheduled thing (an event
// of the test, or a timer) and does it. The wait runs in the test's own
// goroutine, so a test is a deterministic script in simulated time, with no
// sleeps.
type simClock struct {
	now    time.Time
	timers []*simTimer
	events []simEvent // sorted by at
}

// simEvent is a thing the test does at a moment; do reports whether it
// woke the wait (a re-read with the same tools does not).
type simEvent struct {
	at time.Time
	do func() bool
}

func newSimClock(t0 time.Time) *simClock { return &simClock{now: t0} }

// at schedules do at t.
func (c *simClock) at(t time.Time, do func() bool) {
	c.events = append(c.events, simEvent{t, do})
	sort.SliceStable(c.events, func(i, j int) bool { return c.events[i].at.Before(c.events[j].at) })
}

func (c *simClock) Now() time.Time { return c.now }

func (c *simClock) NewTimer(d time.Duration) Timer {
	t := &simTimer{c: c, ch: make(chan time.Time, 1), due: c.now.Add(d), armed: true}
	c.timers = append(c.timers, t)
	return t
}

// WithDeadline ends the returned context at once when t has passed; a
// drain of these tests does not wait on it.
func (c *simClock) WithDeadline(ctx context.Context, t time.Time) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	if !t.After(c.now) {
		cancel()
	}
	return ctx, cancel
}

// park moves time on to the next timer or event and does it, unless a
// timer already fired and the wait has not taken it yet.
func (c *simClock) park() {
	for _, t := range c.timers {
		if len(t.ch) > 0 {
			return
		}
	}
	for {
		var next *simTimer
		for _, t := range c.timers {
			if t.armed && (next == nil || t.due.Before(next.due)) {
				next = t
			}
		}
		if len(c.events) > 0 && (next == nil || !next.due.Before(c.events[0].at)) {
			ev := c.events[0]
			c.events = c.events[1:]
			c.now = latest(c.now, ev.at)
			if ev.do() {
				return
			}
			continue
		}
		if next == nil {
			return
		}
		c.now = latest(c.now, next.due)
		next.armed = false
		next.ch <- c.now
		return
	}
}

// simTimer is a timer of a simClock.
type simTimer struct {
	c     *simClock
	ch    chan time.Time
	due   time.Time
	armed bool
}

func (t *simTimer) C() <-chan time.Time { return t.ch }

func (t *simTimer) Reset(d time.Duration) {
	t.clear()
	t.due, t.armed = t.c.now.Add(d), true
	t.c.park()
}

func (t *simTimer) Stop() {
	t.clear()
	t.armed = false
	t.c.park()
}

// clear drops a value the timer sent and the wait did not take.
func (t *simTimer) clear() {
	select {
	case <-t.ch:
	default:
	}
}
