package cli

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// SIGHUP says the terminal or the parent went: by default it ends the
// session like SIGTERM. A command that reads files it can read again
// (--userscript) takes SIGHUP for that instead (OnHangup), as daemons do.
// See docs/decisions/2026-12-04-userscript-reload.md.

type hangupKey struct{}

// hangup is what SIGHUP does: reload when a command took it, else cancel.
type hangup struct {
	cancel context.CancelFunc
	mu     sync.Mutex
	reload func()
}

// WithHangup returns a context that SIGHUP ends, unless a command given
// it took SIGHUP (OnHangup); stop stops listening and ends the context.
func WithHangup(parent context.Context) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(parent)
	h := &hangup{cancel: cancel}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-sig:
				h.fire()
			case <-done:
				return
			}
		}
	}()
	return context.WithValue(ctx, hangupKey{}, h), func() {
		signal.Stop(sig)
		close(done)
		cancel()
	}
}

// fire is one SIGHUP: the reload, one at a time, or the end.
func (h *hangup) fire() {
	h.mu.Lock()
	reload := h.reload
	h.mu.Unlock()
	if reload == nil {
		h.cancel()
		return
	}
	reload()
}

// OnHangup makes SIGHUP call reload instead of ending ctx (a context of
// WithHangup; any other is left as it is).
func OnHangup(ctx context.Context, reload func()) {
	if h, ok := ctx.Value(hangupKey{}).(*hangup); ok {
		h.mu.Lock()
		h.reload = reload
		h.mu.Unlock()
	}
}
