package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/spf13/pflag"

	"github.com/webmcp-cdp/webmcp-cdp/cdp"
	"github.com/webmcp-cdp/webmcp-cdp/cmd/webmcp-cdp/cli"
	"github.com/webmcp-cdp/webmcp-cdp/cmd/webmcp-cdp/serve"
	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/hub/ci"
	"github.com/webmcp-cdp/webmcp-cdp/hub/mcpserver"
	"github.com/webmcp-cdp/webmcp-cdp/hub/telemetry"
	"github.com/webmcp-cdp/webmcp-cdp/polyfill"
)

// The flags of a browser's pages and server come in three named sets, so
// that each command takes only those that change what it does:
//
//   - pageFlags: how pages are read (backend, settling, limits, origins,
//     names): every command that loads pages, launch, attach, demo and CI
//     mode (inspect, call, test);
//   - callFlags: how a tool call runs: those that call tools, all but
//     inspect;
//   - serveFlags' own: serving MCP to clients (listing, confirmation,
//     caching): launch, attach and demo only. A new serving flag is one
//     line in serveFlags.registerServing.
//
// CI mode keeps the serving flags it does not take at their defaults
// (ciFlags.register).

// pageFlags are the flags of how pages and their tools are read.
type pageFlags struct {
	backend          string
	settle           time.Duration
	maxTools         int
	maxDescBytes     int
	maxSchemaBytes   int
	maxNameLength    int
	maxRegsPerMinute int
	allowOrigins     []string
	denyOrigins      []string
	origins          *hub.OriginPolicy // set by check
	// toolNames is --tool-names; names is it parsed (set by check).
	toolNames string
	names     hub.NameStyle

	// Per page, over CDP.
	userAgent         string
	ignoreHTTPSErrors bool
	// viewport is launch's --viewport (attach leaves the user's tabs
	// their size).
	viewport    cli.Viewport
	userscripts cli.Userscripts // --userscript, read by check
}

func (f *pageFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.backend, "backend", "auto", "WebMCP implementation: auto (native where the browser has it, else the polyfill), polyfill, or native")
	cli.OneOf(fs, "backend", polyfill.Backends())
	fs.DurationVar(&f.settle, "settle", ci.DefaultSettle, "after a page's load event, how long its tools must stay unchanged to count as settled (CI mode's pages, and the start pages a first tools/list waits for)")
	fs.IntVar(&f.maxTools, "max-tools-per-document", 200, "most tools read from one document; the rest are refused")
	fs.IntVar(&f.maxDescBytes, "max-description-bytes", hub.DefaultDescriptionBytes, "longest tool description taken from a page; longer tools are refused")
	fs.IntVar(&f.maxSchemaBytes, "max-schema-bytes", hub.DefaultSchemaBytes, "longest inputSchema or outputSchema (bytes of JSON) taken from a page; larger tools are refused")
	fs.IntVar(&f.maxNameLength, "max-name-length", hub.DefaultNameLength, "longest tool name taken from a page (at most 128); longer tools are refused")
	fs.IntVar(&f.maxRegsPerMinute, "max-registrations-per-minute", hub.DefaultRegistrationsPerMinute, "most tool names new to a tab that it may register per minute; more are refused")
	fs.StringArrayVar(&f.allowOrigins, "allow-origin", nil, "take tools only from origins matching this pattern, repeatable (e.g. 'https://*.example.com'; * matches any text)")
	fs.StringArrayVar(&f.denyOrigins, "deny-origin", nil, "never take tools from origins matching this pattern, repeatable (wins over --allow-origin)")
	fs.StringVar(&f.toolNames, "tool-names", "site", "how page tools, resources and prompts are named: site (<site>_<tool>; resources webmcp://<site>/tab<N>/<uri>) or short (the page's own name while no other site offers the same one; on a clash both fall back to the site's names)")
	cli.OneOf(fs, "tool-names", hub.NameStyles())
	fs.StringVar(&f.userAgent, "user-agent", "", "the user agent that pages see (navigator.userAgent and the User-Agent header), in every tab followed")
	fs.BoolVar(&f.ignoreHTTPSErrors, "ignore-https-errors", false, "load pages whose certificate is not valid (self-signed local dev certificates); browser-wide, also when attaching")
	f.userscripts.Register(fs)
}

func (f *pageFlags) check(ctx context.Context) (polyfill.Backend, error) {
	b, err := polyfill.ParseBackend(f.backend)
	if err != nil {
		return "", fmt.Errorf("--backend: %w", err)
	}
	if f.settle <= 0 {
		return "", fmt.Errorf("--settle %s: must be positive", f.settle)
	}
	if f.names, err = hub.ParseNameStyle(f.toolNames); err != nil {
		return "", err
	}
	if f.maxTools < 1 {
		return "", fmt.Errorf("--max-tools-per-document %d: must be at least 1", f.maxTools)
	}
	for _, l := range []struct {
		flag     string
		v, least int
	}{
		{"--max-description-bytes", f.maxDescBytes, 64},
		{"--max-schema-bytes", f.maxSchemaBytes, 64},
		{"--max-name-length", f.maxNameLength, 1},
		{"--max-registrations-per-minute", f.maxRegsPerMinute, 1},
	} {
		if l.v < l.least {
			return "", fmt.Errorf("%s %d: must be at least %d", l.flag, l.v, l.least)
		}
	}
	if f.maxNameLength > hub.DefaultNameLength {
		return "", fmt.Errorf("--max-name-length %d: WebMCP tool names are at most %d characters", f.maxNameLength, hub.DefaultNameLength)
	}
	if f.origins, err = hub.NewOriginPolicy(f.allowOrigins, f.denyOrigins); err != nil {
		return "", err
	}
	return b, f.userscripts.Load(ctx, slog.Default())
}

// callFlags are the flags of how a tool call runs.
type callFlags struct {
	callTimeout    time.Duration
	maxResultBytes int
	dialogs        string
}

func (f *callFlags) register(fs *pflag.FlagSet) {
	fs.DurationVar(&f.callTimeout, "call-timeout", 30*time.Second, "longest time a tool call may take")
	fs.IntVar(&f.maxResultBytes, "max-result-bytes", 1<<20, "longest result text passed to the client; longer is cut with a notice")
	cli.RegisterDialogs(fs, &f.dialogs)
}

func (f *callFlags) check() error {
	if f.callTimeout <= 0 {
		return fmt.Errorf("--call-timeout %s: must be positive", f.callTimeout)
	}
	if f.maxResultBytes < 1024 {
		return fmt.Errorf("--max-result-bytes %d: must be at least 1024", f.maxResultBytes)
	}
	_, err := mcpserver.ParseDialogPolicy(f.dialogs)
	return err
}

// serveFlags are the flags of a served browser: the page and call flags,
// and those of serving MCP to clients (launch, attach and demo).
type serveFlags struct {
	pageFlags
	callFlags

	noTabTools bool
	waitTools  time.Duration
	confirm    string
	hints      bool // --client-hints
	tasks      cli.Tasks
	// What tools/list holds (--list, --max-listed-tools).
	list      string
	maxListed int
	listing   mcpserver.ListPolicy // set by check

	// The catalog: calls per tab, cached tools.
	maxInflight int
	stateDir    string
	cacheTTL    time.Duration

	// record is --record: the file the session's calls are written to as
	// a spec of webmcp-cdp test.
	record string
	// tel is the telemetry --metrics, --http and OTEL_* turned on (nil:
	// none; browserFlags.makeTelemetry).
	tel *telemetry.Telemetry
}

// register adds every flag of a served browser.
func (f *serveFlags) register(fs *pflag.FlagSet) {
	f.pageFlags.register(fs)
	f.callFlags.register(fs)
	f.registerServing(fs)
}

// registerServing adds the flags that only serving takes (launch, attach,
// demo).
func (f *serveFlags) registerServing(fs *pflag.FlagSet) {
	fs.BoolVar(&f.noTabTools, "no-tab-tools", false, "do not offer the webmcp_*_tab tools (open, activate, reload, close)")
	fs.DurationVar(&f.waitTools, "wait-tools", 10*time.Second, "hold a client's first tools/list until each start page has loaded and its tools settled (--settle), or with attach and no URLs until the open tabs are read, at most this long; 0 answers at once")
	fs.StringVar(&f.confirm, "confirm", "none", "ask the client before calling: consequential (tools marked consequentialHint), writes (every tool not marked readOnlyHint), or none")
	cli.OneOf(fs, "confirm", mcpserver.ConfirmPolicies())
	f.tasks.Register(fs)
	fs.BoolVar(&f.hints, "client-hints", false, "show the page of a call the person's language, time zone and position from the call's _meta (openai/locale, openai/userLocation), granting it the position only while the call runs")
	fs.StringVar(&f.list, "list", "all", "which page tools tools/list holds: all, active (the active tab's; the rest stay reachable through webmcp_list_tools and webmcp_call), or active+cached (also cached tools of closed pages)")
	cli.OneOf(fs, "list", mcpserver.ListModes())
	fs.IntVar(&f.maxListed, "max-listed-tools", 0, "most tools in tools/list, the server's own included (the active tab's first, then the most recently used tabs'); 0 for no cap, else at least 7 (3 with --no-tab-tools)")
	fs.IntVar(&f.maxInflight, "max-inflight-per-tab", 16, "most tool calls running in one tab; more are refused until one finishes")
	fs.StringVar(&f.stateDir, "state-dir", hub.DefaultStateDir(), "directory of the state file that keeps cached tools (annotations.cache) across restarts; empty keeps them in memory only")
	fs.DurationVar(&f.cacheTTL, "cache-ttl", time.Hour, "forget cached tools not seen on an open page for this long (applied at start)")
	fs.StringVar(&f.record, "record", "", "write every page-tool call of the session to this file, as it goes, as a spec that webmcp-cdp test replays (secrets as ${NAME} placeholders; see docs/ci-spec.md)")
}

func (f *serveFlags) check(ctx context.Context) (polyfill.Backend, error) {
	b, err := f.pageFlags.check(ctx)
	if err != nil {
		return "", err
	}
	if err := f.callFlags.check(); err != nil {
		return "", err
	}
	if _, err := mcpserver.ParseConfirmPolicy(f.confirm); err != nil {
		return "", err
	}
	if f.listing, err = mcpserver.ParseListPolicy(f.list, f.maxListed, mcpserver.OwnToolCount(!f.noTabTools)); err != nil {
		return "", err
	}
	if f.maxInflight < 1 {
		return "", fmt.Errorf("--max-inflight-per-tab %d: must be at least 1", f.maxInflight)
	}
	if f.cacheTTL <= 0 {
		return "", fmt.Errorf("--cache-ttl %s: must be positive", f.cacheTTL)
	}
	return b, nil
}

// cdpOptions are the options of each browser followed.
func (f *serveFlags) cdpOptions(backend polyfill.Backend, reloadExisting bool, logger *slog.Logger) cdp.Options {
	return cdp.Options{
		Backend:        backend,
		Limits:         cdp.Limits{MaxTools: f.maxTools, MaxResult: f.maxResultBytes, MaxDescription: f.maxDescBytes, MaxSchema: f.maxSchemaBytes},
		ReloadExisting: reloadExisting,
		UserAgent:      f.userAgent,
		ViewportWidth:  f.viewport.W,
		ViewportHeight: f.viewport.H,
		Logger:         logger,
		PageTimes:      f.tel.Tracing(),
		Userscripts:    f.userscripts.Set,
	}
}

// hubOptions are the hub's options.
func (f *serveFlags) hubOptions(logger *slog.Logger) hub.Options {
	return hub.Options{
		CallTimeout:       f.callTimeout,
		MaxResultBytes:    f.maxResultBytes,
		MaxInflightPerTab: f.maxInflight,
		Limits: hub.Limits{
			ToolsPerDocument:       f.maxTools,
			DescriptionBytes:       f.maxDescBytes,
			SchemaBytes:            f.maxSchemaBytes,
			NameLength:             f.maxNameLength,
			RegistrationsPerMinute: f.maxRegsPerMinute,
		},
		Origins:  f.origins,
		StateDir: f.stateDir,
		CacheTTL: f.cacheTTL,
		Names:    f.names,
		Logger:   logger,
		Hooks:    f.tel.Hooks(),
	}
}

// serverOptions are the MCP server's options, but for Tabs and FirstList.
func (f *serveFlags) serverOptions(logger *slog.Logger) mcpserver.Options {
	return mcpserver.Options{
		Version:      version,
		Logger:       logger,
		Dialogs:      mcpserver.DialogPolicy(f.dialogs),
		Confirm:      mcpserver.ConfirmPolicy(f.confirm),
		CallTimeout:  f.callTimeout,
		List:         f.listing,
		TraceContext: f.tel.TraceContext(),
		ClientHints:  f.hints,
		Tasks:        f.tasks.Options(),
	}
}

// options are serve.Options from the flags.
func (f *serveFlags) options(backend polyfill.Backend, reloadExisting bool) (*serve.Options, error) {
	logger := slog.Default()
	o := &serve.Options{
		CDP:               f.cdpOptions(backend, reloadExisting, logger),
		Hub:               f.hubOptions(logger),
		Server:            f.serverOptions(logger),
		TabTools:          !f.noTabTools,
		IgnoreHTTPSErrors: f.ignoreHTTPSErrors,
		Telemetry:         f.tel,
		WaitTools:         f.waitTools,
		Settle:            f.settle,
	}
	var err error
	if o.Server.Recorder, err = cli.Recorder(f.record, logger); err != nil {
		return nil, err
	}
	return o, nil
}

// startSession starts the browser sup describes, served alone, with the
// hub and the MCP server over it, as the flags say.
func startSession(ctx context.Context, sup serve.Supplied, f *serveFlags, backend polyfill.Backend, reloadExisting bool) (*serve.Session, error) {
	o, err := f.options(backend, reloadExisting)
	if err != nil {
		return nil, err
	}
	return serve.Start(ctx, sup, o)
}
