package fleet

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/cdp/cdptest"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// patience bounds every wait of these tests, so that a bug fails a test
// instead of hanging it. No assertion depends on it.
const patience = cdptest.Patience

// nopSink is the hub of these tests: the fake browsers have no tabs.
type nopSink struct{}

func (nopSink) Update(core.Source, []core.Tool, []core.Refusal) {}
func (nopSink) DropDoc(string)                                  {}
func (nopSink) TabOpened(string, string, string)                {}
func (nopSink) TabClosed(string)                                {}

// logRecord is one line of the fleet's log: its message and its err.
type logRecord struct{ msg, err string }

// logTap is a slog.Handler that hands each record to the test.
type logTap struct {
	attrs []slog.Attr
	c     chan logRecord
}

func (h *logTap) Enabled(context.Context, slog.Level) bool { return true }
func (h *logTap) WithGroup(string) slog.Handler            { return h }
func (h *logTap) WithAttrs(as []slog.Attr) slog.Handler {
	return &logTap{attrs: append(h.attrs[:len(h.attrs):len(h.attrs)], as...), c: h.c}
}

func (h *logTap) Handle(_ context.Context, r slog.Record) error {
	rec := logRecord{msg: r.Message}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "err" {
			rec.err = a.Value.String()
		}
		return true
	})
	select {
	case h.c <- rec:
	default:
	}
	return nil
}

// waitLog waits for a log line whose message is msg and returns its err.
func waitLog(t *testing.T, c <-chan logRecord, msg string) string {
	t.Helper()
	timeout := time.After(patience)
	for {
		select {
		case r := <-c:
			if r.msg == msg {
				return r.err
			}
		case <-timeout:
			t.Fatalf("no log line %q", msg)
			return ""
		}
	}
}
