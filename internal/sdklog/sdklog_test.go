package sdklog

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

func TestQuiet(t *testing.T) {
	tests := []struct {
		name  string
		level slog.Level // the handler's level
		log   func(*slog.Logger)
		want  string // "" when nothing is written
	}{
		{"info hidden at info", slog.LevelInfo, func(l *slog.Logger) { l.Info("server connecting") }, ""},
		{"info shown as debug at debug", slog.LevelDebug, func(l *slog.Logger) { l.Info("server connecting") }, "level=DEBUG msg=\"server connecting\""},
		{"warn kept", slog.LevelInfo, func(l *slog.Logger) { l.Warn("keepalive ping failed") }, "level=WARN msg=\"keepalive ping failed\""},
		{"error kept", slog.LevelWarn, func(l *slog.Logger) { l.Error("jsonrpc2 internal error") }, "level=ERROR"},
		{"stopping hidden at info", slog.LevelInfo, func(l *slog.Logger) { l.Error("server run cancelled", "error", "context canceled") }, ""},
		{"stopping shown as debug at debug", slog.LevelDebug, func(l *slog.Logger) { l.Error("server run cancelled") }, "level=DEBUG msg=\"server run cancelled\""},
		{"another error kept at error", slog.LevelError, func(l *slog.Logger) { l.Error("server session ended with error") }, "level=ERROR"},
		{"attrs kept", slog.LevelDebug, func(l *slog.Logger) {
			l.With("a", 1).WithGroup("g").Info("server session connected", "session_id", "x")
		}, "level=DEBUG msg=\"server session connected\" a=1 g.session_id=x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			base := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: tt.level,
				ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
					if a.Key == slog.TimeKey {
						return slog.Attr{}
					}
					return a
				}}))
			tt.log(Quiet(base))
			got := strings.TrimSpace(buf.String())
			if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
				t.Errorf("wrote %q, want %q", got, tt.want)
			}
		})
	}
}
