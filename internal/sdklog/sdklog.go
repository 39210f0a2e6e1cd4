// Package sdklog adapts webmcp-cdp's logger for the MCP go-sdk, whose
// informational lines ("server connecting", "server session connected",
// "resource subscribed", …) are connection chatter a person running
// webmcp-cdp does not care about: they are logged at debug level, so the
// default level shows only webmcp-cdp's own lines. The SDK's warnings and
// errors keep their level, but for "server run cancelled", which the SDK
// logs as an error when the server's context ends: that is webmcp-cdp
// stopping (Ctrl-C, SIGTERM), which it says itself.
package sdklog

import (
	"context"
	"log/slog"
)

// Quiet returns a logger that writes to l's handler, with records at info
// level (and below warn) lowered to debug. Give it to the SDK as
// mcp.ServerOptions.Logger and mcp.StreamableHTTPOptions.Logger.
func Quiet(l *slog.Logger) *slog.Logger {
	if l == nil {
		l = slog.Default()
	}
	return slog.New(quietHandler{h: l.Handler()})
}

// quietHandler lowers info records to debug before its handler sees them.
type quietHandler struct{ h slog.Handler }

// lower is the level a record of level lv is written at.
func lower(lv slog.Level) slog.Level {
	if lv >= slog.LevelInfo && lv < slog.LevelWarn {
		return slog.LevelDebug
	}
	return lv
}

// stopping is the SDK's message for a server whose context ended.
const stopping = "server run cancelled"

func (q quietHandler) Enabled(ctx context.Context, lv slog.Level) bool {
	// The level of a record is known here, not its message: a record that
	// may be lowered by its message (an error) is let through to Handle.
	return q.h.Enabled(ctx, lower(lv)) || lv >= slog.LevelError
}

func (q quietHandler) Handle(ctx context.Context, r slog.Record) error {
	r.Level = lower(r.Level)
	if r.Message == stopping {
		r.Level = slog.LevelDebug
	}
	if !q.h.Enabled(ctx, r.Level) {
		return nil
	}
	return q.h.Handle(ctx, r)
}

func (q quietHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return quietHandler{h: q.h.WithAttrs(as)}
}

func (q quietHandler) WithGroup(name string) slog.Handler {
	return quietHandler{h: q.h.WithGroup(name)}
}
