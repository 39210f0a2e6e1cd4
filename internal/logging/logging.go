// Package logging builds webmcp-cdp's log/slog logger: one short line per
// event on stderr (stdout is the MCP stdio transport), the full text form at
// --log-level debug, and the full log at debug level in --log-file.
package logging

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Levels returns the values --log-level takes (in any case), least severe
// first.
func Levels() []string { return []string{"debug", "info", "warn", "error"} }

// New returns the logger for --log-level level and --log-file path
// (empty: none): one short line per record on stderr, the full text form
// when level is debug, and the full log at debug level appended to path.
// The file stays open for the life of the process (its writes are not
// buffered: nothing is lost at exit).
func New(stderr io.Writer, level, path string) (*slog.Logger, error) {
	var l slog.Level
	if !slices.Contains(Levels(), strings.ToLower(level)) || l.UnmarshalText([]byte(level)) != nil {
		return nil, fmt.Errorf("--log-level %q: use debug, info, warn or error", level)
	}
	var h slog.Handler
	if l <= slog.LevelDebug {
		h = slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: l})
	} else {
		h = &compactHandler{w: stderr, level: l, mu: new(sync.Mutex)}
	}
	if path != "" {
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, fmt.Errorf("--log-file: %w", err)
		}
		h = teeHandler{h, slog.NewTextHandler(f, &slog.HandlerOptions{Level: slog.LevelDebug})}
	}
	return slog.New(h), nil
}

// compactHandler writes one short line per record: the level only for
// warnings and errors, the message, then key=value pairs; no time.
type compactHandler struct {
	w      io.Writer
	level  slog.Leveler
	mu     *sync.Mutex
	attrs  string // pre-rendered " k=v" of WithAttrs
	prefix string // the open groups, "g.h."
}

func (h *compactHandler) Enabled(_ context.Context, l slog.Level) bool {
	return l >= h.level.Level()
}

func (h *compactHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	switch {
	case r.Level >= slog.LevelError:
		b.WriteString("ERROR ")
	case r.Level >= slog.LevelWarn:
		b.WriteString("WARN ")
	}
	b.WriteString(r.Message)
	b.WriteString(h.attrs)
	r.Attrs(func(a slog.Attr) bool {
		appendAttr(&b, h.prefix, a)
		return true
	})
	b.WriteByte('\n')
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, b.String())
	return err
}

func (h *compactHandler) WithAttrs(as []slog.Attr) slog.Handler {
	var b strings.Builder
	b.WriteString(h.attrs)
	for _, a := range as {
		appendAttr(&b, h.prefix, a)
	}
	h2 := *h
	h2.attrs = b.String()
	return &h2
}

func (h *compactHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	h2 := *h
	h2.prefix += name + "."
	return &h2
}

// appendAttr writes " key=value", groups flattened as "group.key".
func appendAttr(b *strings.Builder, prefix string, a slog.Attr) {
	v := a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return
	}
	if v.Kind() == slog.KindGroup {
		p := prefix
		if a.Key != "" {
			p += a.Key + "."
		}
		for _, g := range v.Group() {
			appendAttr(b, p, g)
		}
		return
	}
	b.WriteByte(' ')
	b.WriteString(prefix)
	b.WriteString(a.Key)
	b.WriteByte('=')
	var s string
	switch v.Kind() {
	case slog.KindDuration:
		s = roundDuration(v.Duration()).String()
	case slog.KindTime:
		s = v.Time().Format(time.RFC3339)
	default:
		s = v.String()
	}
	if s == "" || strings.ContainsAny(s, " =\"\t\n\\") || !strconv.CanBackquote(s) {
		s = strconv.Quote(s)
	}
	b.WriteString(s)
}

// roundDuration keeps three significant figures or so: 1.234s, 12ms.
func roundDuration(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(100 * time.Microsecond)
	}
	return d
}

// teeHandler sends each record to two handlers.
type teeHandler [2]slog.Handler

func (t teeHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return t[0].Enabled(ctx, l) || t[1].Enabled(ctx, l)
}

func (t teeHandler) Handle(ctx context.Context, r slog.Record) error {
	var err0, err1 error
	if t[0].Enabled(ctx, r.Level) {
		err0 = t[0].Handle(ctx, r.Clone())
	}
	if t[1].Enabled(ctx, r.Level) {
		err1 = t[1].Handle(ctx, r)
	}
	if err0 != nil {
		return err0
	}
	return err1
}

func (t teeHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return teeHandler{t[0].WithAttrs(as), t[1].WithAttrs(as)}
}

func (t teeHandler) WithGroup(name string) slog.Handler {
	return teeHandler{t[0].WithGroup(name), t[1].WithGroup(name)}
}
