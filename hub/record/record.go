// Package record writes the page-tool calls of a session as a spec of
// `webmcp-cdp test` (docs/ci-spec.md), so that what an agent did on a site
// becomes the site's regression test.
//
// A Recorder is told of every finished call of a page tool by the hub
// (hub.CallHooks.Detail), and of the tab tools that change tabs by the MCP
// server (TabOpened, TabReloaded, TabClosed). Calls are grouped into the
// spec's pages by tab: a call into another tab, or into a tab that was
// reloaded, opened or closed since, or whose URL changed, starts a new page,
// which `test` opens in a fresh tab. Each call becomes a step with the
// tool's page name, its arguments, and a snapshot of its result: the text,
// or for text that is a JSON object or array the parsed value.
//
// Secrets never reach the file: an argument whose schema property has
// format password, or whose name looks like a secret's (SecretName), is
// written as a ${NAME} placeholder, NAME is listed under secrets: at the
// top, and the value is taken out of the results' snapshots as well. URLs
// (the page's, and those in arguments and results) get the same treatment
// for their query and fragment parameters whose names look like secrets'
// and for their userinfo (urls.go); a page URL's placeholders are marked
// in the file, as `test` does not fill them in.
//
// With a file (Options.File) the spec is written as the session goes: the
// whole spec again after every call, to a temporary file renamed over the
// old one, so that the file is valid YAML at every moment and a crash loses
// at most the call in flight (docs/decisions/2026-11-28-record.md). Without
// one, the last calls are kept in memory only, for the status page's
// download (WriteSpec).
package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// Defaults of Options.
const (
	DefaultMaxSteps         = 1000
	DefaultMaxSnapshotBytes = 64 << 10
	DefaultMaxArgsBytes     = 256 << 10
	DefaultMaxFileBytes     = 16 << 20
	DefaultRing             = 100
)

// Options configures a Recorder. Zero values take the defaults.
type Options struct {
	// File is where the spec is written; empty keeps the calls in memory
	// only.
	File string
	// MaxSteps bounds the calls written to File; later calls are left out
	// (and logged once).
	MaxSteps int
	// MaxSnapshotBytes bounds a result's snapshot: a longer result is
	// checked for its isError only (and logged).
	MaxSnapshotBytes int
	// MaxArgsBytes bounds a call's arguments: longer ones are not kept,
	// and the step says so (its replay then fails until they are filled
	// in).
	MaxArgsBytes int
	// MaxFileBytes bounds File: a call that would make it longer ends the
	// recording, as MaxSteps does.
	MaxFileBytes int
	// Ring is how many of the last calls are kept in memory for WriteSpec.
	Ring int
	// Logger receives the log (default slog.Default()).
	Logger *slog.Logger
	// Now is the clock (default time.Now); tests set it.
	Now func() time.Time
}

// Recorder records a session's calls. Its methods are safe for concurrent
// use.
type Recorder struct {
	opts   Options
	logger *slog.Logger

	mu      sync.Mutex
	secrets secrets
	file    []*event // what File holds
	ring    []*event // the last events, for WriteSpec (shared with file)
	calls   int      // calls in file
	stopped bool     // File reached a bound: no more calls go in
	failed  bool     // the last write failed (logged once)
}

// event is a call, or a change of a tab. A call is kept as the hub told
// it (raw) until it is written: then it is made a step, once (ready). So a
// session without --record pays for the ring only, not for redacting and
// parsing every call.
type event struct {
	kind  eventKind
	tab   int
	url   string
	raw   rawCall
	step  step
	ready bool
}

// rawCall is a call as the hub told it, its result's text bounded.
type rawCall struct {
	tool         string
	args, schema json.RawMessage
	text         string
	isError      bool
	over         int // the result's length when over MaxSnapshotBytes (text is then empty)
	argsOver     int // the arguments' length when over MaxArgsBytes (args are then nil)
}

type eventKind int

const (
	evCall eventKind = iota
	evOpen
	evReload
	evClose
)

// step is a recorded call, secrets already replaced.
type step struct {
	// url is the page's URL, and redacted the placeholders written in it
	// (redactURL).
	url      string
	redacted []string
	tool     string
	args     any // decoded JSON (decodeJSON); nil for none
	isError  bool
	snapshot any    // the text, or a parsed JSON object or array
	skipped  string // why there is no snapshot
	// argsSkipped says why there are no arguments.
	argsSkipped string
}

// New returns a Recorder. With a file it writes an empty spec there at
// once, so that a path that cannot be written fails before the session.
func New(opts Options) (*Recorder, error) {
	if opts.MaxSteps <= 0 {
		opts.MaxSteps = DefaultMaxSteps
	}
	if opts.MaxSnapshotBytes <= 0 {
		opts.MaxSnapshotBytes = DefaultMaxSnapshotBytes
	}
	if opts.MaxArgsBytes <= 0 {
		opts.MaxArgsBytes = DefaultMaxArgsBytes
	}
	if opts.MaxFileBytes <= 0 {
		opts.MaxFileBytes = DefaultMaxFileBytes
	}
	if opts.Ring <= 0 {
		opts.Ring = DefaultRing
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	r := &Recorder{opts: opts, logger: opts.Logger}
	if opts.File != "" {
		data, err := r.render(nil)
		if err == nil {
			err = writeAtomic(opts.File, data)
		}
		if err != nil {
			return nil, fmt.Errorf("--record %s: %w", opts.File, err)
		}
	}
	return r, nil
}

// File is the file written, or "".
func (r *Recorder) File() string { return r.opts.File }

// Call records a finished call (a hub.CallHooks.Detail hook).
func (r *Recorder) Call(d hub.CallDetail) {
	if d.Page == "" {
		return
	}
	raw := rawCall{tool: d.Page, schema: d.Schema, isError: d.Result.IsError}
	if len(d.Args) > r.opts.MaxArgsBytes {
		raw.argsOver = len(d.Args)
	} else {
		raw.args = bytes.Clone(d.Args)
	}
	if raw.text = resultText(d.Result); len(raw.text) > r.opts.MaxSnapshotBytes {
		raw.over, raw.text = len(raw.text), ""
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.add(&event{kind: evCall, tab: d.Tab, url: d.URL, raw: raw})
}

// TabOpened records that webmcp_open_tab opened tab n on url.
func (r *Recorder) TabOpened(n int, url string) { r.tabEvent(evOpen, n, url) }

// TabReloaded records that webmcp_reload_tab reloaded tab n.
func (r *Recorder) TabReloaded(n int) { r.tabEvent(evReload, n, "") }

// TabClosed records that webmcp_close_tab closed tab n.
func (r *Recorder) TabClosed(n int) { r.tabEvent(evClose, n, "") }

func (r *Recorder) tabEvent(k eventKind, n int, url string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.add(&event{kind: k, tab: n, url: url})
}

// add appends e to the ring and, while the bounds allow, to the file,
// which it then writes. r.mu is held.
func (r *Recorder) add(e *event) {
	r.ring = append(r.ring, e)
	if len(r.ring) > r.opts.Ring {
		r.ring = r.ring[len(r.ring)-r.opts.Ring:]
	}
	if r.opts.File == "" || r.stopped {
		return
	}
	if e.kind == evCall && r.calls >= r.opts.MaxSteps {
		r.stop(fmt.Sprintf("it holds %d calls, the most --record keeps", r.calls))
		return
	}
	r.file = append(r.file, e)
	r.ready(e)
	data, err := r.render(r.file)
	if err == nil && len(data) > r.opts.MaxFileBytes {
		r.file = r.file[:len(r.file)-1]
		r.stop(fmt.Sprintf("the next call would make it longer than %d bytes", r.opts.MaxFileBytes))
		return
	}
	if e.kind == evCall {
		r.calls++
	}
	if err == nil {
		err = writeAtomic(r.opts.File, data)
	}
	if err != nil {
		if !r.failed {
			r.logger.Warn("cannot write the recorded session; trying again at the next call", "file", r.opts.File, "err", err)
		}
		r.failed = true
		return
	}
	if r.failed {
		r.logger.Info("the recorded session is written again", "file", r.opts.File)
		r.failed = false
	}
}

// stop ends the recording into the file, saying why. r.mu is held.
func (r *Recorder) stop(why string) {
	r.stopped = true
	r.logger.Warn("recording stopped: later calls are not written to the file (the status page still offers the last ones)", "file", r.opts.File, "why", why)
}

// ready makes the step of a call event, once. r.mu is held (for the
// secrets).
func (r *Recorder) ready(e *event) {
	if e.kind != evCall || e.ready {
		return
	}
	e.ready = true
	d := e.raw
	e.raw = rawCall{}
	st := step{tool: d.tool, isError: d.isError}
	st.url, st.redacted = r.secrets.redactURL(e.url, true)
	if len(bytes.TrimSpace(d.args)) > 0 && string(d.args) != "null" {
		var schema map[string]any
		if len(d.schema) > 0 {
			json.Unmarshal(d.schema, &schema) // a bad schema redacts by names only
		}
		if args, err := decodeJSON(d.args); err == nil {
			st.args = r.secrets.redact(args, schema)
		} else {
			st.args = map[string]any{}
		}
	}
	if d.argsOver > 0 {
		st.argsSkipped = fmt.Sprintf("arguments of %d bytes, over the %d kept: fill them in", d.argsOver, r.opts.MaxArgsBytes)
		r.logger.Warn("a recorded call's arguments are too long to keep; its step has none", "tool", d.tool, "bytes", d.argsOver, "max", r.opts.MaxArgsBytes)
	}
	if d.over > 0 {
		st.skipped = fmt.Sprintf("result of %d bytes, over the %d of a snapshot", d.over, r.opts.MaxSnapshotBytes)
		r.logger.Warn("a recorded call's result is too long to snapshot; its step checks isError only", "tool", d.tool, "bytes", d.over, "max", r.opts.MaxSnapshotBytes)
	} else {
		r.secrets.learnURLs(d.text)
		st.snapshot = Snapshot(r.secrets.scrub(d.text))
	}
	e.step = st
}

// resultText joins a result's text blocks with newlines, as `test` reads a
// result.
func resultText(o core.Outcome) string {
	var parts []string
	for _, b := range o.Content {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// Snapshot is what a result's text is stored as: the parsed value when the
// text is a JSON object or array, else the text itself.
func Snapshot(text string) any {
	t := strings.TrimSpace(text)
	if strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
		if v, err := decodeJSON([]byte(t)); err == nil {
			return v
		}
	}
	return text
}

// decodeJSON decodes one JSON value. Whole numbers that fit are int64 (so
// that 12345678901 is written as it was), other numbers float64: the YAML
// library writes both as YAML numbers.
func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("more than one JSON value")
	}
	return numbers(v), nil
}

// numbers turns the json.Numbers of v into int64 or float64.
func numbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = numbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = numbers(e)
		}
	}
	return v
}

// WriteSpec writes the last calls of the session (up to Options.Ring
// events) as a spec.
func (r *Recorder) WriteSpec(w io.Writer) error {
	r.mu.Lock()
	data, err := r.render(r.ring)
	r.mu.Unlock()
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

// writeAtomic writes data to a temporary file beside path and renames it
// over path, so that path holds the old or the new spec, never a part.
func writeAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}
