package multi

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"time"
)

// ErrStop, wrapped in a Dialer's error or sent on its lost channel, says
// the browser is gone for good (such as --backend native on a browser
// without WebMCP): Supervise stops instead of reconnecting.
var ErrStop = errors.New("not reconnecting")

// Dialer connects to one browser and starts following it, reporting to
// a.Sink(); it calls a.Up with the browser before it reports anything, so
// that the tools it reports can be called at once. ctx ends when the
// connection is given up. lost delivers why the connection ended.
type Dialer func(ctx context.Context, a *Attempt) (lost <-chan error, err error)

// Attempt is one attempt to connect a member.
type Attempt struct {
	s    *Set
	name string
	g    *memberSink
}

// Sink is what the attempt's browser reports to.
func (a *Attempt) Sink() Sink { return a.g }

// Up routes the member's calls to b from now on.
func (a *Attempt) Up(b Member) { a.s.setState(a.name, StateUp, nil, b) }

// Backoff spaces the attempts to reconnect: the n-th wait is Min·2ⁿ, at
// most Max, less a random part of up to half (jitter), so that browsers
// dropped together do not all come back at once.
type Backoff struct {
	Min, Max time.Duration
}

// DefaultBackoff waits 250 ms, then twice as long each time, up to 30 s.
func DefaultBackoff() Backoff {
	return Backoff{Min: 250 * time.Millisecond, Max: 30 * time.Second}
}

// delay returns the wait before attempt n (from 0).
func (b Backoff) delay(n int) time.Duration {
	d := b.Min
	for i := 0; i < n && d < b.Max; i++ {
		d *= 2
	}
	d = min(d, b.Max)
	if half := int64(d / 2); half > 0 {
		d -= time.Duration(rand.Int64N(half + 1))
	}
	return d
}

// wait waits d or until ctx ends, and reports whether ctx is still going.
func wait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// Supervise keeps the named member connected until ctx ends, reporting to
// sink (the hub; it must not change between calls): it dials,
// and when the connection is lost it closes the member's tabs in the sink
// (their tools go cached) and dials again after a backoff, until it
// succeeds. It returns when ctx ends or dial reports ErrStop.
func (s *Set) Supervise(ctx context.Context, name string, sink Sink, dial Dialer, bo Backoff) {
	log := s.logger
	if name != "" {
		log = log.With("browser", name)
	}
	connected := false // a connection was up before
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			d := bo.delay(attempt - 1)
			// The first retry of a streak is told, the rest only in debug:
			// a browser down for hours must not flood the log.
			level := slog.LevelInfo
			if attempt > 1 {
				level = slog.LevelDebug
			}
			log.Log(ctx, level, "reconnecting to the browser", "in", d.Round(time.Millisecond), "attempt", attempt)
			if !wait(ctx, d) {
				s.setState(name, StateStopped, ctx.Err(), nil)
				return
			}
		}
		g := newMemberSink(s, sink, name)
		gctx, cancel := context.WithCancel(ctx)
		lost, err := dial(gctx, &Attempt{s: s, name: name, g: g})
		if err != nil {
			cancel()
			g.close()
			if ctx.Err() != nil {
				s.setState(name, StateStopped, ctx.Err(), nil)
				return
			}
			if errors.Is(err, ErrStop) {
				s.setState(name, StateStopped, err, nil)
				if name != "" {
					log.Error("giving up on the browser", "err", err)
				}
				return
			}
			s.setState(name, StateConnecting, err, nil)
			level := slog.LevelWarn
			if attempt > 0 {
				level = slog.LevelDebug
			}
			log.Log(ctx, level, "cannot connect to the browser; will retry with backoff", "err", err, "attempt", attempt, "max_wait", bo.Max)
			continue
		}
		switch {
		case connected:
			log.Info("browser reconnected: the tools its tabs register are live again")
		case name != "":
			log.Info("browser connected")
		}
		connected = true
		attempt = 0
		var why error
		select {
		case why = <-lost:
		case <-ctx.Done():
		}
		cancel()
		if ctx.Err() != nil {
			s.setState(name, StateStopped, ctx.Err(), nil)
			g.close()
			return
		}
		if why == nil {
			why = errors.New("the connection ended")
		}
		s.setState(name, StateConnecting, why, nil)
		s.dropped(name)
		g.close()
		if errors.Is(why, ErrStop) {
			s.setState(name, StateStopped, why, nil)
			// A browser served alone: its end is the caller's to tell.
			if name != "" {
				log.Error("lost the browser for good; its tools stay cached", "err", why)
			}
			return
		}
		log.Warn("lost the browser; its tools are cached until it is back, the other browsers go on", "err", why)
	}
}

// setState records a member's state and its connection (b nil when not
// up).
func (s *Set) setState(name, state string, err error, b Member) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.members[name]
	m.state, m.err, m.b = state, err, b
}

func (s *Set) dropped(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.members[name].drops++
}
