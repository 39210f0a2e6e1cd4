package serve

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/cdp"
	"github.com/webmcp-cdp/webmcp-cdp/cdp/browsers"
	"github.com/webmcp-cdp/webmcp-cdp/cdp/fleet"
	"github.com/webmcp-cdp/webmcp-cdp/cmd/webmcp-cdp/cli"
	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/hub/mcpserver"
	"github.com/webmcp-cdp/webmcp-cdp/hub/record"
	"github.com/webmcp-cdp/webmcp-cdp/hub/telemetry"
)

// This file gives each person a space of their own (--isolate user,
// docs/decisions/2026-12-03-spaces.md): a Session (a fleet of one over a
// browser of their own: a context in the shared browser, or one from a
// pool), with its own hub, MCP server, cached tools and tabs. The HTTP edge
// picks the space by the request's OAuth principal (mcpserver.Spaces).

// Defaults of SpacesOptions.
const (
	// DefaultSpaceIdle is --space-idle's default.
	DefaultSpaceIdle = 15 * time.Minute
	// DefaultMaxSpaces is --max-spaces's default.
	DefaultMaxSpaces = 32
)

// SpacesOptions say how people's spaces are made.
type SpacesOptions struct {
	// Source returns the source of a new space's browser: a context of
	// its own in the shared browser, or a browser of its own from a pool.
	// Its browsers are not started again when lost: the space closes and
	// opens afresh at the person's next request.
	Source func() browsers.Source
	// URLs are the start URLs, opened in each space when it opens.
	URLs []string
	// Idle closes a space after this long without a request (0:
	// DefaultSpaceIdle).
	Idle time.Duration
	// Max bounds the spaces open at once (0: DefaultMaxSpaces).
	Max int
	// Record, when set, is --record's file: each space records its calls
	// in a file of its own beside it, named with the space's id.
	Record string
}

// Check refuses bounds that make no sense, naming their flags.
func (so SpacesOptions) Check() error {
	if so.Idle < time.Second {
		return fmt.Errorf("--space-idle %s: at least 1s", so.Idle)
	}
	if so.Max < 1 || so.Max > 10000 {
		return fmt.Errorf("--max-spaces %d: give 1 to 10000", so.Max)
	}
	return nil
}

// Spaces are the people's spaces, opened at each person's first request:
// it implements mcpserver.Spaces. Its methods are safe for concurrent use.
type Spaces struct {
	ctx    context.Context // the spaces' life
	cancel context.CancelFunc
	opts   *Options
	so     SpacesOptions
	logger *slog.Logger

	mu     sync.Mutex
	spaces map[string]*space // by SpaceID
	closed bool
	// all counts the spaces' goroutines (their idle watch, their end).
	all sync.WaitGroup
}

// space is one person's space: open (s set) or opening (ready open).
type space struct {
	id    string
	ready chan struct{} // closed once the opening is over (s or err set)
	s     *Session
	err   error
	// used is when the last request reached it; touched wakes its idle
	// watch.
	used    time.Time
	touched chan struct{}
	// down is closed once its browser's connection ended (nil until the
	// browser is up): the space is lost, and its watch is closing it.
	down <-chan struct{}
}

// NewSpaces returns the spaces of people served with opts (each space gets
// a copy, its cached tools in a directory of its own under
// opts.Hub.StateDir). They live until ctx ends or Close is called.
func NewSpaces(ctx context.Context, opts *Options, so SpacesOptions) *Spaces {
	if so.Idle <= 0 {
		so.Idle = DefaultSpaceIdle
	}
	if so.Max <= 0 {
		so.Max = DefaultMaxSpaces
	}
	ctx, cancel := context.WithCancel(ctx)
	return &Spaces{ctx: ctx, cancel: cancel, opts: opts, so: so, logger: slog.Default(), spaces: map[string]*space{}}
}

// Gauges are the spaces' gauges, summed over the spaces open.
func (ss *Spaces) Gauges() telemetry.Gauges {
	return telemetry.Gauges{
		Spaces: ss.Count,
		Counts: func() hub.Counts {
			var n hub.Counts
			for _, s := range ss.open() {
				c := s.Hub.Counts()
				n.LiveTools, n.CachedTools, n.Tabs = n.LiveTools+c.LiveTools, n.CachedTools+c.CachedTools, n.Tabs+c.Tabs
			}
			return n
		},
		Sessions: func() int {
			n := 0
			for _, s := range ss.open() {
				n += s.Server.Sessions()
			}
			return n
		},
		Browsers: func() map[string]int {
			n := map[string]int{}
			for _, s := range ss.open() {
				for _, st := range s.fleet.Set().Statuses() {
					n[st.State]++
				}
			}
			return n
		},
	}
}

// open returns the sessions of the spaces open now.
func (ss *Spaces) open() []*Session {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	out := make([]*Session, 0, len(ss.spaces))
	for _, sp := range ss.spaces {
		if sp.s != nil {
			out = append(out, sp.s)
		}
	}
	return out
}

// SpaceID names p's space in logs, traces, metrics and file names: a hash
// of the issuer and the subject, never the subject itself.
func SpaceID(p mcpserver.Person) string {
	h := sha256.New()
	fmt.Fprintf(h, "%d:%s%d:%s", len(p.Issuer), p.Issuer, len(p.Subject), p.Subject)
	return hex.EncodeToString(h.Sum(nil))[:20]
}

// Count implements mcpserver.Spaces: the spaces open or opening.
func (ss *Spaces) Count() int {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return len(ss.spaces)
}

// Space implements mcpserver.Spaces: p's space's MCP server, the space
// opened at their first request. A person whose space is opening waits for
// it (at most ctx); a newcomer past SpacesOptions.Max gets a
// *mcpserver.SpacesFullError, and no other space is closed for them.
func (ss *Spaces) Space(ctx context.Context, p mcpserver.Person) (*mcpserver.Server, error) {
	id := SpaceID(p)
	// A space found open may close (idle, its browser lost) before the
	// request reaches it: then it is opened again, once.
	for try := 0; ; try++ {
		ss.mu.Lock()
		if ss.closed {
			ss.mu.Unlock()
			return nil, errors.New("the hub is stopping")
		}
		sp := ss.spaces[id]
		if sp != nil && sp.lost() {
			// Its watch is closing it: this request opens a new one.
			delete(ss.spaces, id)
			sp = nil
		}
		if sp == nil {
			if len(ss.spaces) >= ss.so.Max {
				ss.mu.Unlock()
				return nil, &mcpserver.SpacesFullError{Max: ss.so.Max, RetryAfter: time.Minute}
			}
			sp = &space{id: id, ready: make(chan struct{}), touched: make(chan struct{}, 1), used: time.Now()}
			ss.spaces[id] = sp
			ss.all.Go(func() { ss.openSpace(sp) })
		}
		ss.mu.Unlock()
		select {
		case <-sp.ready:
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for your space to open: %w", ctx.Err())
		}
		if sp.err != nil {
			return nil, sp.err
		}
		if ss.touch(sp) {
			return sp.s.Server, nil
		}
		if try > 0 {
			return nil, errors.New("your space closed as it opened: its browser was lost")
		}
	}
}

// lost reports whether sp's browser was lost: its connection ended, before
// the fleet of one says it is gone. ss.mu is held.
func (sp *space) lost() bool {
	select {
	case <-sp.down:
		return true
	default:
		return false
	}
}

// touch notes a request to sp, and reports whether sp is still open: not
// closed for its idle (watch drops it as it decides) nor lost.
func (ss *Spaces) touch(sp *space) bool {
	ss.mu.Lock()
	open := ss.spaces[sp.id] == sp && !sp.lost()
	if open {
		sp.used = time.Now()
	}
	ss.mu.Unlock()
	if open {
		select {
		case sp.touched <- struct{}{}:
		default:
		}
	}
	return open
}

// openSpace opens sp: its browser from the source, its start pages, its hub
// and MCP server; then it watches it until it is idle, lost or the spaces
// end, and closes it.
func (ss *Spaces) openSpace(sp *space) {
	log := ss.logger.With("space", sp.id)
	o, err := ss.spaceOptions(sp.id, log)
	began := time.Now()
	var s *Session
	if err == nil {
		s, err = Start(ss.ctx, Supplied{Browser: fleet.Browser{Source: ss.so.Source(), StartFails: true, URLs: ss.so.URLs}}, o)
	}
	if err != nil {
		log.Warn("a space could not be opened", "err", err)
		sp.err = fmt.Errorf("your space could not be opened: %w", err)
		ss.drop(sp)
		close(sp.ready)
		return
	}
	ss.mu.Lock()
	sp.s, sp.down = s, s.Conn.Done()
	ss.mu.Unlock()
	close(sp.ready)
	log.Info("space opened", "spaces", ss.Count(), "took", time.Since(began).Round(time.Millisecond))
	why := ss.watch(sp)
	ss.drop(sp)
	// Its clients' sessions end with it: a client's next request opens
	// the space again (and, before 2026-07-28, a new session).
	s.Server.CloseSessions()
	s.Close()
	closeHub(s.Hub)
	log.Info("space closed", "why", why, "spaces", ss.Count())
}

// spaceOptions are the serving options of space id: its own cached tools
// (under spaces/<id> in the state directory), its own recording (--record
// FILE becomes FILE with .<id> before its extension), and its id on its
// calls' spans.
func (ss *Spaces) spaceOptions(id string, log *slog.Logger) (*Options, error) {
	o := *ss.opts
	o.inSpace = true
	if o.Hub.StateDir != "" {
		o.Hub.StateDir = filepath.Join(o.Hub.StateDir, "spaces", id)
	}
	if o.Telemetry != nil {
		o.Telemetry = o.Telemetry.InSpace(id)
		o.Hub.Hooks = o.Telemetry.Hooks()
	}
	o.Server.Recorder = nil // each space's server keeps its own calls
	if ss.so.Record != "" {
		ext := filepath.Ext(ss.so.Record)
		file := strings.TrimSuffix(ss.so.Record, ext) + "." + id + ext
		r, err := record.New(record.Options{File: file, Logger: log})
		if err != nil {
			return nil, err
		}
		log.Info("recording the space's calls as a spec", "file", file)
		o.Server.Recorder = r
	}
	return &o, nil
}

// watch waits until sp has had no request for SpacesOptions.Idle (none
// arrived, none in flight, none answered), its browser is lost, or the
// spaces end, and says which.
func (ss *Spaces) watch(sp *space) string {
	t := time.NewTimer(ss.so.Idle)
	defer t.Stop()
	for {
		select {
		case <-sp.touched:
			t.Reset(ss.so.Idle)
		case <-t.C:
			// Decided and dropped at once: a request that touched sp
			// before keeps it, one after opens a new space. A request in
			// flight (a long call, a first list held for the start
			// pages) keeps it too, and idleness counts from its answer.
			busy, answered := sp.s.Server.SpaceActivity()
			ss.mu.Lock()
			left := ss.so.Idle - time.Since(sp.used)
			if busy {
				left = ss.so.Idle
			} else if !answered.IsZero() {
				left = max(left, ss.so.Idle-time.Since(answered))
			}
			if left <= 0 {
				ss.dropLocked(sp)
			}
			ss.mu.Unlock()
			if left <= 0 {
				return "idle"
			}
			t.Reset(left)
		case <-sp.s.Gone():
			if !sp.s.lost(ss.ctx) {
				return "stopping"
			}
			return sp.s.Err().Error()
		case <-ss.ctx.Done():
			return "stopping"
		}
	}
}

// drop forgets sp: the person's next request opens a new space.
func (ss *Spaces) drop(sp *space) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.dropLocked(sp)
}

// dropLocked is drop with ss.mu held.
func (ss *Spaces) dropLocked(sp *space) {
	if ss.spaces[sp.id] == sp {
		delete(ss.spaces, sp.id)
	}
}

// Close closes every space (each ends its browser: a context disposed of,
// a pool browser given back) and waits until they are closed.
func (ss *Spaces) Close() {
	ss.mu.Lock()
	ss.closed = true
	ss.mu.Unlock()
	ss.cancel()
	ss.all.Wait()
}

// SpaceBrowsers say where people's spaces get their browsers.
type SpaceBrowsers struct {
	// Grid: each space a Selenium Grid session of its own (Pool > 0 bounds
	// them).
	Grid *browsers.GridOptions
	// Pool > 0 (--browsers N given) without Grid: each space a browser
	// launched for it with Launch, at most Pool at once.
	Pool   int
	Launch cdp.LaunchOptions
	// Dial, when set, connects to a shared browser that was running
	// already: each space a browser context on a connection of its own.
	// Without Dial, Grid or Pool, one browser is launched with Launch and
	// each space is a browser context in it, on a view of its pipe.
	Dial func(ctx context.Context) (*cdp.Conn, error)
}

// RunSpacesFrom serves a space per person with browsers from sb (see
// RunSpaces).
func RunSpacesFrom(ctx context.Context, sb SpaceBrowsers, opts *Options, serving Serving, so SpacesOptions) error {
	var src browsers.Source
	var front *browsers.Browser
	switch {
	case sb.Dial != nil:
		src = &browsers.Context{Dial: sb.Dial}
	case sb.Grid != nil:
		src = browsers.NewGrid(*sb.Grid)
	case sb.Pool > 0:
		src = &browsers.Launch{Options: sb.Launch}
	default:
		var err error
		if front, err = (&browsers.Launch{Options: sb.Launch}).Start(ctx); err != nil {
			return err
		}
		defer front.End(context.WithoutCancel(ctx))
		src = &browsers.Context{Dial: front.Conn().NewView}
	}
	if sb.Pool > 0 {
		if so.Max <= 0 {
			so.Max = DefaultMaxSpaces
		}
		so.Max = min(so.Max, sb.Pool)
	}
	so.Source = func() browsers.Source { return src }
	return RunSpaces(ctx, opts, serving, so, front)
}

// RunSpaces serves a space per person over HTTP (serving.HTTP, in OAuth
// mode) until ctx ends or the endpoint fails. front, when not nil, is the
// shared browser the spaces' contexts are made in (a launched one): its
// loss ends the run with exit status 2.
func RunSpaces(ctx context.Context, opts *Options, serving Serving, so SpacesOptions, front *browsers.Browser) error {
	if serving.HTTP == nil || serving.HTTP.Auth == nil || serving.Relay != nil {
		return cli.Usage(errors.New("--isolate user serves a space per person over --http with --oauth-issuer"))
	}
	ss := NewSpaces(ctx, opts, so)
	defer ss.Close()
	if tel := opts.Telemetry; tel != nil && tel.Metrics != nil {
		tel.Metrics.SetGauges(ss.Gauges())
	}
	stopTelemetry, err := startTelemetry(opts.Telemetry, serving.MetricsAddr)
	if err != nil {
		return err
	}
	defer stopTelemetry()
	warnIgnoreHTTPS(opts)
	hopts := *serving.HTTP
	hopts.Spaces = ss
	if opts.CDP.Userscripts != nil {
		hopts.Userscripts = ss.userscripts
	}
	if m := metricsOf(opts.Telemetry); m != nil {
		hopts.Metrics = m.Handler()
	}
	errc := make(chan error, 1)
	hs, err := mcpserver.ServeSpaces(hopts, slog.Default(), errc)
	if err != nil {
		return &cli.ExitError{Code: 2, Err: err}
	}
	defer hs.Close()
	slog.Info("a space per person: each gets a browser space of their own (a browser context, or a browser of the pool) at their first request", "idle", so.Idle, "max", so.Max)
	// A nil channel never fires: without a front browser, only the
	// endpoint's failure or ctx ends the run.
	var gone, dropped <-chan struct{}
	if front != nil {
		gone, dropped = front.Gone(), front.Conn().Done()
	}
	select {
	case err := <-errc:
		return &cli.ExitError{Code: 2, Err: err}
	case <-gone:
		return &cli.ExitError{Code: 2, Err: fmt.Errorf("lost the shared browser: %s", front.Reason())}
	case <-dropped:
		return &cli.ExitError{Code: 2, Err: fmt.Errorf("lost the shared browser: %w", front.Conn().Err())}
	case <-ctx.Done():
		slog.Info("interrupted; stopping")
		return nil
	}
}
