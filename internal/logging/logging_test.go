package logging

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestCompactLog(t *testing.T) {
	for _, tc := range []struct {
		name string
		log  func(*slog.Logger)
		want string
	}{
		{"info has no level", func(l *slog.Logger) { l.Info("browser ready", "product", "Chrome/156") }, "browser ready product=Chrome/156\n"},
		{"warn has its level, quoting", func(l *slog.Logger) { l.Warn("a start URL did not load", "url", "http://x", "err", "net::ERR FAILED") }, "WARN a start URL did not load url=http://x err=\"net::ERR FAILED\"\n"},
		{"error", func(l *slog.Logger) { l.Error("boom") }, "ERROR boom\n"},
		{"debug is below info", func(l *slog.Logger) { l.Debug("hidden") }, ""},
		{"durations rounded, groups flattened", func(l *slog.Logger) {
			l.With("tab", 1).WithGroup("call").Info("done", "took", 1234567*time.Microsecond, slog.Group("page", "title", "A B"))
		}, "done tab=1 call.took=1.235s call.page.title=\"A B\"\n"},
		{"empty value quoted", func(l *slog.Logger) { l.Info("m", "k", "") }, "m k=\"\"\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			l, err := New(&b, "info", "")
			if err != nil {
				t.Fatal(err)
			}
			tc.log(l)
			if b.String() != tc.want {
				t.Errorf("got %q, want %q", b.String(), tc.want)
			}
		})
	}
}

func TestLogFileGetsDebug(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.txt")
	var b bytes.Buffer
	l, err := New(&b, "warn", path)
	if err != nil {
		t.Fatal(err)
	}
	l.Debug("detail", "target", "ABC")
	l.Warn("trouble")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "level=DEBUG msg=detail target=ABC") || !strings.Contains(string(data), "level=WARN msg=trouble") {
		t.Errorf("the log file lacks the full log:\n%s", data)
	}
	if b.String() != "WARN trouble\n" {
		t.Errorf("stderr got %q, want only the warning", b.String())
	}
	if _, err := New(&b, "loud", ""); err == nil {
		t.Error("--log-level loud was accepted")
	}
}
