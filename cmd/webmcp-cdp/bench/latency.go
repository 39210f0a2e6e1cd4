package bench

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Paired makes n pairs of calls in one loop: iteration i calls a once and b
// once, a first when i is even and b first when i is odd, so that noise on
// the machine falls on both alike. It returns the latencies of a and of b.
func Paired(ctx context.Context, n int, a, b func(context.Context) error) (Latencies, Latencies, error) {
	la, lb := make(Latencies, 0, n), make(Latencies, 0, n)
	timed := func(f func(context.Context) error, into *Latencies) error {
		t0 := time.Now()
		if err := f(ctx); err != nil {
			return err
		}
		*into = append(*into, time.Since(t0))
		return nil
	}
	for i := range n {
		first, second := a, b
		firstInto, secondInto := &la, &lb
		if i%2 == 1 {
			first, second = b, a
			firstInto, secondInto = &lb, &la
		}
		if err := timed(first, firstInto); err != nil {
			return nil, nil, err
		}
		if err := timed(second, secondInto); err != nil {
			return nil, nil, err
		}
	}
	return la, lb, nil
}

// inTurn runs a then b when round i is even, b then a when it is odd, so
// that over the rounds each goes first as often; it stops at the first
// error.
func inTurn(i int, a, b func() error) error {
	if i%2 == 1 {
		a, b = b, a
	}
	if err := a(); err != nil {
		return err
	}
	return b()
}

// Interleaved makes n rounds of calls in one loop, one call of each of fs
// per round, rotating which goes first (round i starts with fs[i%len(fs)]
// and goes on in order), so that noise on the machine falls on all alike
// and each takes each place equally often when n is a multiple of
// len(fs). It returns the latencies of each, in the order of fs.
func Interleaved(ctx context.Context, n int, fs ...func(context.Context) error) ([]Latencies, error) {
	ls := make([]Latencies, len(fs))
	for j := range ls {
		ls[j] = make(Latencies, 0, n)
	}
	for i := range n {
		for k := range fs {
			j := (i + k) % len(fs)
			t0 := time.Now()
			if err := fs[j](ctx); err != nil {
				return nil, err
			}
			ls[j] = append(ls[j], time.Since(t0))
		}
	}
	return ls, nil
}

// Throughput measures a and b each with workers concurrent callers, in
// alternating rounds of length round (a, b, then b, a, and so on) until each
// side has had rounds rounds, so that noise on the machine falls on both
// alike. It returns the calls per second of a and of b over their rounds.
func Throughput(ctx context.Context, workers int, round time.Duration, rounds int, a, b func(context.Context) error) (float64, float64, error) {
	var calls [2]int64
	var spent [2]time.Duration
	for r := range 2 * rounds {
		// Pairs of rounds alternate which side goes first: a b b a a b ...
		side := r % 2
		if (r/2)%2 == 1 {
			side = 1 - side
		}
		f := a
		if side == 1 {
			f = b
		}
		n, took, err := burst(ctx, workers, round, f)
		if err != nil {
			return 0, 0, err
		}
		calls[side] += n
		spent[side] += took
	}
	return float64(calls[0]) / spent[0].Seconds(), float64(calls[1]) / spent[1].Seconds(), nil
}

// burst runs workers goroutines calling f until d has passed, and returns
// the calls that succeeded and the time until the last one finished.
func burst(ctx context.Context, workers int, d time.Duration, f func(context.Context) error) (int64, time.Duration, error) {
	var done atomic.Int64
	var errOnce sync.Once
	var firstErr error
	t0 := time.Now()
	stop := t0.Add(d)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for time.Now().Before(stop) {
				if err := f(ctx); err != nil {
					errOnce.Do(func() { firstErr = err })
					return
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	took := time.Since(t0)
	if firstErr != nil {
		return 0, 0, fmt.Errorf("%d concurrent callers: %w", workers, firstErr)
	}
	return done.Load(), took, nil
}

// navigation makes the page navigate n times, alternating the prefix of its
// ten tools, and times the navigation's start → the client got
// list_changed and lists the ten new tools.
//
// Each round also sends the raw browser's tab to the same URL and times
// it to the load event: the floor (the page's tools register before its
// load event). Rounds alternate which of the two goes first.
func navigation(ctx context.Context, s *server, rb *rawBrowser, page string, n int) (Latencies, Latencies, error) {
	var l, raw Latencies
	for i := range n {
		// Odd rounds go back to the page's own names, so the page ends as
		// it began when n is even.
		prefix := ""
		if i%2 == 0 {
			prefix = fmt.Sprintf("n%d_", i)
		}
		url := page + "?p=" + prefix
		rawNav := func() error {
			t0 := time.Now()
			ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			if err := rb.navigate(ctx, url); err != nil {
				return err
			}
			raw = append(raw, time.Since(t0))
			return nil
		}
		if i%2 == 0 {
			if err := rawNav(); err != nil {
				return nil, nil, err
			}
		}
		nav, err := waitTool(ctx, s.cs, "navigate", 1)
		if err != nil {
			return nil, nil, err
		}
		for len(s.changes) > 0 {
			<-s.changes
		}
		t0 := time.Now()
		if _, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: nav, Arguments: map[string]any{"url": url}}); err != nil {
			return nil, nil, fmt.Errorf("navigation %d: %w", i+1, err)
		}
		for {
			select {
			case <-s.changes:
			case <-time.After(10 * time.Second):
				return nil, nil, fmt.Errorf("no tools/list_changed within 10s of navigation %d", i+1)
			}
			tools, err := listAll(ctx, s.cs)
			if err != nil {
				return nil, nil, err
			}
			count := 0
			for _, t := range tools {
				src, _ := t.Meta["webmcp-cdp/source"].(map[string]any)
				name, _ := src["tool"].(string)
				if strings.HasPrefix(name, prefix+"echo_") && (prefix != "" || !strings.HasPrefix(name, "n")) {
					count++
				}
			}
			if count == 10 {
				break
			}
		}
		l = append(l, time.Since(t0))
		if i%2 == 1 {
			if err := rawNav(); err != nil {
				return nil, nil, err
			}
		}
	}
	return l, raw, nil
}
