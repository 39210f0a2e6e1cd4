// Package sdklog adapts webmcp-cdp's logger for the MCP go-sdk, whose
// informational lines ("server connecting", "server session connected",
// "resource subscribed", …) are connection chatter a person running
// webmcp-cdp does not care about: they are logged at debug level, so the
// default level shows only webmcp-cdp's own lines. The SDK's warnings and
// errors keep their level.
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

func (q quietHandler) Enabled(ctx context.Context, lv slog.Level) bool {
	return q.h.Enabled(ctx, lower(lv))
}

func (q quietHandler) Handle(ctx context.Context, r slog.Record) error {
	r.Level = lower(r.Level)
	return q.h.Handle(ctx, r)
}

func (q quietHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return quietHandler{h: q.h.WithAttrs(as)}
}

func (q quietHandler) WithGroup(name string) slog.Handler {
	return quietHandler{h: q.h.WithGroup(name)}
}
