package browsers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/cdp"
)

// Grid starts each browser as a Selenium Grid 4 session (W3C WebDriver
// new session), connects to the session's CDP endpoint (the se:cdp
// capability, which the Grid proxies to the node's browser), keeps the
// session from the Grid's idle timeout, and deletes it when ended.
type Grid struct {
	opts GridOptions

	mu        sync.Mutex
	keepAlive time.Duration // opts.KeepAlive, or what /status gave
}

// GridOptions say which Grid and what sessions to ask it for.
type GridOptions struct {
	// URL is the Grid's address, such as http://127.0.0.1:4444 (a path such
	// as /wd/hub is kept).
	URL *url.URL
	// Capabilities are the session's capabilities (SELENIUM_REMOTE_CAPABILITIES),
	// merged over browserName chrome; Args go into their goog:chromeOptions,
	// before any args of their own.
	Capabilities map[string]any
	Args         []string
	// Header goes on every request to the Grid and on the CDP WebSocket
	// (SELENIUM_REMOTE_HEADERS: credentials). Its values are never logged.
	Header http.Header
	// Tag marks the sessions this process creates, so that a later start
	// can tell the ones it left behind (Leftovers).
	Tag Tag
	// KeepAlive is the period of the command that keeps an idle session
	// from the Grid's timeout and tells a session the Grid ended; 0 reads
	// the nodes' session timeout from /status and takes a third of it.
	KeepAlive time.Duration
	// NewSessionTimeout bounds the wait for a new session, which the Grid
	// queues until a slot is free (default 2 minutes).
	NewSessionTimeout time.Duration
	// Client is the HTTP client (nil: a default one).
	Client *http.Client
	Logger *slog.Logger
}

// NewGrid returns a source of sessions on the Grid opts name.
func NewGrid(opts GridOptions) *Grid {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Client == nil {
		opts.Client = http.DefaultClient
	}
	if opts.NewSessionTimeout <= 0 {
		opts.NewSessionTimeout = 2 * time.Minute
	}
	return &Grid{opts: opts}
}

// TagCapability is the capability that marks a session as webmcp-cdp's.
// The Grid passes it through and shows it in /status.
const TagCapability = "webmcp-cdp:owner"

// Tag says which process created a session.
type Tag struct {
	Host    string    `json:"host"`
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
}

// NewTag is the tag of this process.
func NewTag() Tag {
	h, _ := os.Hostname()
	return Tag{Host: h, PID: os.Getpid(), Started: time.Now().UTC().Truncate(time.Second)}
}

const (
	// maxGridBody bounds what is read of a Grid's answer.
	maxGridBody = 1 << 20
	// deleteTimeout bounds a session's deletion when ctx has no deadline.
	deleteTimeout = 5 * time.Second
	// defaultKeepAlive is the period when /status says nothing (the Grid's
	// default timeout is 300 s).
	defaultKeepAlive = 60 * time.Second
	minKeepAlive     = time.Second
	// keepAliveFailures is how many keep-alive commands in a row may fail
	// to reach the Grid before the session counts as lost.
	keepAliveFailures = 3
)

// Fresh is true: each session is a new browser.
func (g *Grid) Fresh() bool { return true }

func (g *Grid) String() string { return "Selenium Grid " + cdp.RedactURL(g.opts.URL.String()) }

// endpoint is the Grid URL with path appended to its own.
func (g *Grid) endpoint(path string) string {
	u := *g.opts.URL
	u.Path = strings.TrimSuffix(u.Path, "/") + path
	u.RawPath = ""
	return u.String()
}

// Capabilities returns the capabilities of a new session: browserName
// chrome, the caller's over it, Args in front of goog:chromeOptions.args,
// and the tag.
func (g *Grid) capabilities() map[string]any {
	caps := map[string]any{"browserName": "chrome"}
	for k, v := range g.opts.Capabilities {
		caps[k] = v
	}
	opts := map[string]any{}
	if o, ok := caps["goog:chromeOptions"].(map[string]any); ok {
		for k, v := range o {
			opts[k] = v
		}
	}
	args := make([]any, 0, len(g.opts.Args))
	for _, a := range g.opts.Args {
		args = append(args, a)
	}
	if own, ok := opts["args"].([]any); ok {
		args = append(args, own...)
	}
	opts["args"] = args
	caps["goog:chromeOptions"] = opts
	caps[TagCapability] = g.opts.Tag
	return caps
}

// wdError is a WebDriver error answer.
type wdError struct {
	Error   string `json:"error"`
	Message string `json:"message"`
}

// do sends a WebDriver request and decodes the answer's value into out.
func (g *Grid) do(ctx context.Context, method, path string, body any, out any) (int, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, g.endpoint(path), rd)
	if err != nil {
		return 0, err
	}
	for k, vs := range g.opts.Header {
		req.Header[k] = vs
	}
	if body != nil {
		// Grid 4.48 refuses plain application/json.
		req.Header.Set("Content-Type", "application/json; charset=utf-8")
	}
	resp, err := g.opts.Client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("%s does not answer: %w", g, plainErr(err))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxGridBody+1))
	if err != nil {
		return resp.StatusCode, fmt.Errorf("%s: reading its answer: %w", g, err)
	}
	if len(data) > maxGridBody {
		return resp.StatusCode, fmt.Errorf("%s answered with more than %d bytes", g, maxGridBody)
	}
	var env struct {
		Value json.RawMessage `json:"value"`
	}
	jerr := json.Unmarshal(data, &env)
	if resp.StatusCode >= 300 {
		var we wdError
		if jerr == nil {
			_ = json.Unmarshal(env.Value, &we)
		}
		return resp.StatusCode, &GridError{Status: resp.StatusCode, Code: we.Error, Message: firstLine(we.Message), Grid: g.String()}
	}
	if jerr != nil {
		return resp.StatusCode, fmt.Errorf("%s answered %s with no WebDriver JSON: is this a Selenium Grid?", g, resp.Status)
	}
	if out != nil {
		if err := json.Unmarshal(env.Value, out); err != nil {
			return resp.StatusCode, fmt.Errorf("%s: its answer does not read as WebDriver's: %w", g, err)
		}
	}
	return resp.StatusCode, nil
}

// GridError is the Grid saying no.
type GridError struct {
	Grid    string
	Status  int
	Code    string // the WebDriver error, such as "session not created"
	Message string // the first line of the Grid's message
}

func (e *GridError) Error() string {
	var hint string
	switch {
	case e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden:
		hint = ": check the credentials in SELENIUM_REMOTE_HEADERS (or --selenium-header)"
	case strings.Contains(e.Message, "timed out") || strings.Contains(e.Message, "Timed out"):
		hint = ": the Grid found no free slot in time (or no node that matches the capabilities); end other sessions, add nodes, or ask for fewer --browsers"
	case e.Code == "session not created":
		hint = ": check SELENIUM_REMOTE_CAPABILITIES (or --selenium-capabilities) against the Grid's nodes (GET /status shows their stereotypes)"
	}
	what := e.Code
	if what == "" {
		what = http.StatusText(e.Status)
	}
	if e.Message != "" {
		what += ": " + e.Message
	}
	return fmt.Sprintf("%s said %d %s%s", e.Grid, e.Status, what, hint)
}

// IsSessionGone reports whether err says the session no longer exists.
func (e *GridError) IsSessionGone() bool {
	return e.Code == "invalid session id" || e.Status == http.StatusNotFound
}

// firstLine cuts a Grid message (often a Java stack trace) to its first
// line, at most 300 bytes.
func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	s = strings.TrimSpace(s)
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// plainErr drops the URL that net/http puts in its errors (it may hold a
// token), keeping the cause.
func plainErr(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
