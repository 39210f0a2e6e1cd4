package settle

import (
	"context"
	"time"
)

// Clock is the time a wait reads and the timers it arms: the real clock
// (Real), or a fake one in tests.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// NewTimer returns a timer that fires once, after d.
	NewTimer(d time.Duration) Timer
	// WithDeadline returns a copy of ctx that ends at t, as
	// context.WithDeadline does on the real clock.
	WithDeadline(ctx context.Context, t time.Time) (context.Context, context.CancelFunc)
}

// Timer is a timer of a Clock.
type Timer interface {
	// C receives the time when the timer fires.
	C() <-chan time.Time
	// Reset makes the timer fire after d (and not for an earlier arming).
	Reset(d time.Duration)
	// Stop stops the timer.
	Stop()
}

// Real returns the real clock.
func Real() Clock { return realClock{} }

// realClock is the time package's clock.
type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

func (realClock) WithDeadline(ctx context.Context, t time.Time) (context.Context, context.CancelFunc) {
	return context.WithDeadline(ctx, t)
}

// realTimer is a *time.Timer (whose Reset and Stop, since Go 1.23, leave
// no stale value in C).
type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time   { return r.t.C }
func (r realTimer) Reset(d time.Duration) { r.t.Reset(d) }
func (r realTimer) Stop()                 { r.t.Stop() }
