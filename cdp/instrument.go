package cdp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	cdpt "github.com/chromedp/cdproto/cdp"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/cdproto/webmcp"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
	"github.com/webmcp-cdp/webmcp-cdp/internal/userscript"
	"github.com/webmcp-cdp/webmcp-cdp/polyfill"
)

// ErrNavigated is the error of a call whose document went away (it is
// core.ErrNavigated, which the hub reads).
var ErrNavigated = core.ErrNavigated

// Sink receives what the browser learns about tabs and tools; *hub.Hub is
// one. Its methods are called one at a time, in the order the browser
// learned things, from a goroutine that holds no lock of the browser
// (sinkqueue.go): they may call back into the Browser. A method that
// blocks holds back the events after it, not the browser; the Browser's
// actions that wait for the Sink (Reload, Open, SettleExisting) must not be
// called from one.
type Sink interface {
	// Update sets the tools of a document, as the page declared them, with
	// the tools the browser could not hand over (refused). The sink admits
	// them: every check of a tool's name, size and schema is the sink's.
	Update(src core.Source, tools []core.Tool, refused []core.Refusal)
	// DropDoc forgets a document (it navigated away or its frame went).
	DropDoc(key string)
	// TabOpened records a tab that shows a page, or its new URL and title.
	TabOpened(id, url, title string)
	// TabClosed forgets a tab.
	TabClosed(id string)
}

// Limits bound what a page can hand to Go.
type Limits struct {
	// MaxTools is the most tools read from one document (default 200).
	MaxTools int
	// MaxDescription is the longest description, in characters (default 16 KiB).
	MaxDescription int
	// MaxSchema is the longest inputSchema, in characters of JSON (default 64 KiB).
	MaxSchema int
	// MaxResult is the longest result the page sends back (default 1 MiB).
	MaxResult int
}

func (l *Limits) defaults() {
	if l.MaxTools <= 0 {
		l.MaxTools = 200
	}
	if l.MaxDescription <= 0 {
		l.MaxDescription = 16 << 10
	}
	if l.MaxSchema <= 0 {
		l.MaxSchema = 64 << 10
	}
	if l.MaxResult <= 0 {
		l.MaxResult = 1 << 20
	}
}

// Options configures Instrument.
type Options struct {
	// Backend picks the WebMCP implementation (default auto).
	Backend polyfill.Backend
	// Limits bound what pages send.
	Limits Limits
	// ReloadExisting reloads the tabs that had loaded before we attached.
	ReloadExisting bool
	// UserAgent, when set, overrides the user agent in every target.
	UserAgent string
	// ViewportWidth and ViewportHeight, when set, fix the viewport of
	// every tab (Emulation.setDeviceMetricsOverride).
	ViewportWidth, ViewportHeight int
	// Logger receives the log (default slog.Default()).
	Logger *slog.Logger
	// Marks are the page script's secrets (default: fresh ones). Pass the
	// same Marks to every Browser that reconnects to one browser: documents
	// that kept running across a dropped connection still hold the page
	// script of the old one, and it reaches the new connection only if the
	// nonce and the binding name are the same (see Marks).
	Marks Marks
	// PageTimes asks the page script for the time each tool's execute
	// took (core.Result.PageTook), for traces.
	PageTimes bool
	// BrowserContext, when set, is the id of the one browser context the
	// Browser follows (NewBrowserContext): its tabs, their popups and
	// frames. The targets of every other context are left at once, never
	// reported to the Sink, and tabs the Browser opens are made in it.
	// Empty follows every target of the browser.
	BrowserContext string
	// Userscripts are the operator's scripts, run in the documents they
	// match after the page API is in place (userscripts.go). When the set
	// is replaced, the documents loaded from then on run the new scripts
	// (userscripts_reload.go). Nil: none.
	Userscripts *userscript.Set
	// UserscriptRuns, when set, records the documents each userscript
	// runs in.
	UserscriptRuns *userscript.Runs
}

// Marks are the secrets a Browser writes into the page script: the nonce
// that marks the bridge hand-off and the name of the runtime binding. The
// page never sees either. A document that outlives a connection keeps its
// page script; on a new connection with the same Marks, Runtime.enable
// replays its stored bridge hand-off (a console message carrying the nonce)
// and Runtime.addBinding gives its binding back, so its tools are read live
// again without a reload. (A page can lose that replay by clearing its
// console or logging past the console's storage: its tools then stay cached
// until it reloads, as if it had changed nothing.)
type Marks struct {
	// Nonce marks the bridge hand-off; [A-Za-z0-9] only.
	Nonce string
	// Binding names the runtime binding; [A-Za-z0-9_$] only.
	Binding string
}

// NewMarks returns fresh random Marks.
func NewMarks() Marks {
	return Marks{Nonce: randomHex(16), Binding: "__webmcpCdp_" + randomHex(6)}
}

// Browser follows every target of a browser, keeps the page script in each
// document, reports tools to a Sink, and runs tools. It implements
// hub.Browser.
type Browser struct {
	conn *Conn
	// sink is the ordered queue in front of the Sink given to Start: its
	// methods only enqueue, so they are called with b.mu held.
	sink   *sinkQueue
	opts   Options
	logger *slog.Logger
	// scriptParams are the Page.addScriptToEvaluateOnNewDocument params
	// of the page script, rendered once: every target gets the same 120 KB
	// script, which would otherwise be encoded anew for each.
	scriptParams jsonv2.Value
	nonce        string
	binding      string
	callSeq      atomic.Int64
	fatal        chan error
	// life ends when the browser stops being followed (Start's context);
	// background reads of pages run on it.
	life context.Context

	mu      sync.Mutex
	targets map[target.SessionID]*targetState
	docs    map[string]*docState
	native  nativeCalls
	// inflight holds the contexts of the calls running in each tab.
	inflight map[string][]*context.Context
	// attached is closed and replaced whenever a target attaches.
	attached chan struct{}
	// existing are the tabs the browser had when Start turned auto-attach
	// on; progress is closed and replaced whenever a target's setup or a
	// document's read ends, or either goes (settle.go).
	existing []*targetState
	progress chan struct{}
	// policyHeaders are the frames' Permissions-Policy headers (permissions.go).
	policyHeaders policyHeaders
	// navs wakes the calls that wait for a frame's next document (navresult.go).
	navs navWatch
	// mcpb holds the MCP-B page servers of each document (pageserver.go).
	mcpb map[string]*psDoc
	// diag follows the tabs opened for CI mode (diagnose.go).
	diag diagnoses
	// xo relays tools between the documents of a tab of different origins (exposure.go).
	xo exposure
	// defaultContext is the browser's default context's id, when
	// Options.BrowserContext names another (contexts.go).
	defaultContext string
	// us are the userscripts injected after the page script (userscripts.go);
	// usChanged is closed when the Options' set is replaced.
	us        userscripts
	usChanged <-chan struct{}
}

type targetState struct {
	sess     *Session
	targetID string
	tab      string // the top-level tab's target id
	kind     string // "page" or "iframe"
	contexts map[runtime.ExecutionContextID]*docState
	frames   map[cdpt.FrameID]frameInfo
	natives  map[cdpt.FrameID]*nativeDoc
	ready    chan struct{} // closed when setup is done
	url      string        // the URL when attached
	// parentFrame is the frame that holds an "iframe" target's frame.
	parentFrame cdpt.FrameID
	// calls are the calls running in this target; a crash cancels them.
	calls map[*runningCall]struct{}
	// us are the userscripts registered in it (userscripts_reload.go).
	us targetScripts
	// shown says the sink was told of this tab; prerender that it is a
	// prerendered page, no tab until activated; loadedBefore that its
	// document loaded before we attached (targets.go).
	shown, prerender, loadedBefore bool
}

// runningCall is a call into a target, cancelled with core.ErrPageCrashed
// when the target's renderer crashes.
type runningCall struct {
	cancel context.CancelCauseFunc
}

type frameInfo struct{ url, origin string }

type docState struct {
	key      string
	t        *targetState
	ctxID    runtime.ExecutionContextID
	uniqueID string
	frameID  cdpt.FrameID
	origin   string
	url      string
	bridge   runtime.RemoteObjectID
	native   bool
	alive    bool
	busy     bool // a refresh loop runs
	dirty    bool // another refresh is needed
	// denied says why the Permissions Policy denies the document tools;
	// empty while it may use them (or before the verdict).
	denied   string
	adopting bool // the bridge handed over is being adopted (bridge.go)
	bound    bool // its last list says the page script holds the binding
	queued   int  // refreshes started but not yet running
}

type nativeDoc struct {
	key   string
	tools map[string]core.Tool
	ids   map[webmcp.ToolID]string
	over  int // tools left out over Limits.MaxTools
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// NewBrowser returns a Browser over conn; Start begins following targets.
func NewBrowser(conn *Conn, opts Options) (*Browser, error) {
	if opts.Backend == "" {
		opts.Backend = polyfill.BackendAuto
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	opts.Limits.defaults()
	if opts.Marks == (Marks{}) {
		opts.Marks = NewMarks()
	}
	b := &Browser{
		conn:    conn,
		sink:    newSinkQueue(),
		opts:    opts,
		logger:  opts.Logger,
		nonce:   opts.Marks.Nonce,
		binding: opts.Marks.Binding,
		fatal:   make(chan error, 1),
		targets: make(map[target.SessionID]*targetState),
		docs:    make(map[string]*docState),
		life:    context.Background(),

		attached: make(chan struct{}),
		progress: make(chan struct{}),
	}
	b.native.init()
	script, err := polyfill.Script(polyfill.Options{Nonce: b.nonce, Binding: b.binding, Backend: opts.Backend})
	if err != nil {
		return nil, err
	}
	b.scriptParams, err = jsonv2.Marshal(&page.AddScriptToEvaluateOnNewDocumentParams{Source: script, RunImmediately: ptr(true)})
	if err != nil {
		return nil, fmt.Errorf("encoding the page script: %w", err)
	}
	b.us.nonce = b.nonce
	scripts, past, changed := opts.Userscripts.Numbered()
	b.usChanged = changed
	if err := b.us.set(scripts, past); err != nil {
		return nil, err
	}
	return b, nil
}

// Start sets up auto-attach and starts reporting to sink. Tabs that exist
// already are attached too; new ones are paused until the page script is in
// place. With Options.BrowserContext, it fails when the browser has no such
// context.
//
// ctx bounds the browser's own work: when it ends, reads of pages in
// progress stop.
func (b *Browser) Start(ctx context.Context, sink Sink) error {
	b.sink.sink = sink
	b.life = ctx
	bs := b.conn.Browser()
	if err := b.checkContext(ctx); err != nil {
		return err
	}
	bs.SetHandler(b.onBrowserEvent)
	if err := bs.Call(ctx, target.CommandSetDiscoverTargets, &target.SetDiscoverTargetsParams{Discover: true}, nil); err != nil {
		return fmt.Errorf("turning on target discovery: %w", err)
	}
	params := &target.SetAutoAttachParams{AutoAttach: true, WaitForDebuggerOnStart: true, Flatten: ptr(true)}
	params.Filter = append(params.Filter, struct {
		Exclude bool   `json:"exclude"`
		Type    string `json:"type,omitempty,omitzero"`
	}{Type: "page"})
	if err := bs.Call(ctx, target.CommandSetAutoAttach, params, nil); err != nil {
		return fmt.Errorf("turning on auto-attach: %w", err)
	}
	b.noteExisting()
	if b.usChanged != nil {
		go b.followUserscripts(ctx, b.usChanged) // (userscripts_reload.go)
	}
	return nil
}

// Fatal delivers an error that makes going on pointless (such as --backend
// native on a browser without WebMCP).
func (b *Browser) Fatal() <-chan error { return b.fatal }

func ptr[T any](v T) *T { return &v }
