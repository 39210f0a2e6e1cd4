package bench

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/cdp"
	"github.com/webmcp-cdp/webmcp-cdp/cdp/browsers"
	"github.com/webmcp-cdp/webmcp-cdp/cdp/fleet"
	"github.com/webmcp-cdp/webmcp-cdp/cmd/webmcp-cdp/serve"
	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/hub/ci"
	"github.com/webmcp-cdp/webmcp-cdp/hub/mcpserver"
)

// This file measures what a space per person costs (issue 38, point 5):
// serve.Spaces driven in this process as `launch --isolate user` runs it
// (one launched browser, each space a browser context on a view of its
// pipe, with its own hub and MCP server), each person's MCP client over an
// in-memory transport to their space's server (the rows are about the
// space, not HTTP or OAuth). The reference is what a space replaces: a
// second browser launched for the person and served alone (serve.Start
// over browsers.Launch, as `launch` serves one), with the same client.

// The shape of the spaces rows.
const (
	// spaceNewcomers is how many persons' first lists are timed.
	spaceNewcomers = 5
	// spacesOpen is how many spaces the memory rows open (figures at 1
	// and at this many); they stay open for the other rows.
	spacesOpen = 6
	// spaceRefs is how many second browsers the memory rows launch.
	spaceRefs = 2
	// benchPageTools are the bench page's tools: echo_0 to echo_9 and
	// navigate.
	benchPageTools = 11
	// spaceIssuer is the issuer of the bench's persons.
	spaceIssuer = "https://issuer.bench.invalid"
	// launchWaitTools is launch's --wait-tools default.
	launchWaitTools = 10 * time.Second
	// spaceCallTarget is issue 38's bound on a call's p50 in a space, as
	// a ratio to the same call in a browser served alone.
	spaceCallTarget = 1.05
)

// spacesRows adds the spaces rows: memory per additional space beside a
// second browser per person, a call's p50 inside a space beside a browser
// served alone, and a new person's first complete tools/list beside a
// second browser launched for them.
func spacesRows(ctx context.Context, page string, calls int, add func(what, value string)) error {
	b, err := newSpacesBench(ctx, page)
	if err != nil {
		return err
	}
	defer b.close()
	refs, err := b.memoryRows(ctx, add)
	for _, r := range refs {
		defer r.close()
	}
	if err != nil {
		return err
	}
	if err := b.callRows(ctx, refs[0], calls, add); err != nil {
		return err
	}
	for _, r := range refs {
		r.close() // the first lists are timed with no second browser running
	}
	return b.firstListRows(ctx, add)
}

// spacesBench is the shared browser, the spaces in it and what the rows
// open.
type spacesBench struct {
	page   string
	launch cdp.LaunchOptions
	opts   *serve.Options
	// front is the shared browser, leading process group frontPID.
	front    *browsers.Browser
	frontPID int
	spaces   *serve.Spaces
	// clients are the persons' client sessions, one per space, in the
	// order the spaces opened.
	clients []*mcp.ClientSession
}

// newSpacesBench launches the shared browser and the spaces over it, with
// launch's default options and no state directory (--state-dir "").
func newSpacesBench(ctx context.Context, page string) (*spacesBench, error) {
	quiet := slog.New(slog.DiscardHandler)
	b := &spacesBench{
		page:   page,
		launch: cdp.LaunchOptions{Headless: true, Logger: quiet},
		opts: &serve.Options{
			CDP:       cdp.Options{Logger: quiet},
			Hub:       hub.Options{Logger: quiet}, // no StateDir: cached tools in memory only
			Server:    mcpserver.Options{Version: "bench", Logger: quiet},
			TabTools:  true,
			WaitTools: launchWaitTools,
			Settle:    ci.DefaultSettle,
		},
	}
	before, err := groupLeaders()
	if err != nil {
		return nil, err
	}
	if b.front, err = (&browsers.Launch{Options: b.launch}).Start(ctx); err != nil {
		return nil, fmt.Errorf("spaces: launching the shared browser: %w", err)
	}
	if b.frontPID, err = newLeader(before); err != nil {
		b.front.End(context.WithoutCancel(ctx))
		return nil, err
	}
	src := &browsers.Context{Dial: b.front.Conn().NewView}
	b.spaces = serve.NewSpaces(ctx, b.opts, serve.SpacesOptions{
		Source: func() browsers.Source { return src },
		URLs:   []string{page},
		Idle:   time.Hour,
		Max:    spacesOpen + spaceNewcomers,
	})
	return b, nil
}

// close ends the clients, the spaces and the shared browser.
func (b *spacesBench) close() {
	for _, cs := range b.clients {
		cs.Close()
	}
	b.spaces.Close()
	b.front.End(context.Background())
}

// enter is a new person's first request: their space opens (Space), their
// client connects and lists the tools until the list holds the start
// page's. It returns the time to Space's answer and to that list, and
// whether the first list lacked the page's tools.
func (b *spacesBench) enter(ctx context.Context, who string) (opened, listed time.Duration, missed bool, err error) {
	t0 := time.Now()
	srv, err := b.spaces.Space(ctx, mcpserver.Person{Issuer: spaceIssuer, Subject: who})
	if err != nil {
		return 0, 0, false, fmt.Errorf("spaces: %s's space: %w", who, err)
	}
	opened = time.Since(t0)
	cs, err := connectInMemory(ctx, srv)
	if err != nil {
		return 0, 0, false, err
	}
	b.clients = append(b.clients, cs)
	missed, err = completeList(ctx, cs)
	return opened, time.Since(t0), missed, err
}

// alone is a browser launched for one person and served alone: the
// reference of a space.
type alone struct {
	s      *serve.Session
	cs     *mcp.ClientSession
	pid    int // its browser's process group
	cancel context.CancelFunc
	closed bool
}

// launchAlone launches a browser on the bench page and serves it alone
// (serve.Start over browsers.Launch, as launch does), connects a client and
// lists until the list holds the page's tools. It returns the time from
// the launch to that list, and whether the first list lacked them.
func (b *spacesBench) launchAlone(ctx context.Context) (*alone, time.Duration, bool, error) {
	before, err := groupLeaders()
	if err != nil {
		return nil, 0, false, err
	}
	actx, cancel := context.WithCancel(ctx)
	t0 := time.Now()
	sup := serve.Supplied{Browser: fleet.Browser{Source: &browsers.Launch{Options: b.launch}, StartFails: true, URLs: []string{b.page}}}
	s, err := serve.Start(actx, sup, b.opts)
	if err != nil {
		cancel()
		return nil, 0, false, fmt.Errorf("spaces: launching a second browser: %w", err)
	}
	a := &alone{s: s, cancel: cancel}
	if a.cs, err = connectInMemory(actx, s.Server); err != nil {
		a.close()
		return nil, 0, false, err
	}
	missed, err := completeList(actx, a.cs)
	took := time.Since(t0)
	if err == nil {
		a.pid, err = newLeader(before)
	}
	if err != nil {
		a.close()
		return nil, 0, false, err
	}
	return a, took, missed, nil
}

// close ends the client, the browser and the hub. Closing again does
// nothing.
func (a *alone) close() {
	if a.closed {
		return
	}
	a.closed = true
	if a.cs != nil {
		a.cs.Close()
	}
	a.s.Close()
	a.s.Hub.Close()
	a.cancel()
}

// memoryRows opens spacesOpen spaces and adds the memory of the shared
// browser's processes and of this process's Go heap per additional space
// (from 1 to spacesOpen), then launches spaceRefs second browsers, each
// served alone, and adds their figures and the ratio. It returns the second
// browsers, still running, for the call rows.
func (b *spacesBench) memoryRows(ctx context.Context, add func(what, value string)) ([]*alone, error) {
	var pss [2]int64
	var procs [2]int
	var heap [2]uint64
	for i := range spacesOpen {
		if _, _, _, err := b.enter(ctx, fmt.Sprintf("resident-%d", i+1)); err != nil {
			return nil, err
		}
		if i != 0 && i != spacesOpen-1 {
			continue
		}
		at := min(i, 1)
		var err error
		if pss[at], procs[at], err = groupPSS(b.frontPID); err != nil {
			return nil, err
		}
		heap[at] = heapInUse()
	}
	more := float64(spacesOpen - 1)
	perPSS := float64(pss[1]-pss[0]) / more
	perHeap := (float64(heap[1]) - float64(heap[0])) / more
	add(fmt.Sprintf("spaces: the shared browser's processes (PSS of its process group), 1 → %d spaces, each the bench page in a tab of its own browser context", spacesOpen),
		fmt.Sprintf("%s → %s MB (%d → %d processes): %s MB per additional space", mb(pss[0]), mb(pss[1]), procs[0], procs[1], mbf(perPSS)))
	add(fmt.Sprintf("spaces: this process's Go heap (HeapInuse after GC), 1 → %d spaces, each its hub, MCP server, cdp follower and one in-memory client session", spacesOpen),
		fmt.Sprintf("%s → %s MB: %s MB per additional space", mb(int64(heap[0])), mb(int64(heap[1])), mbf(perHeap)))

	var refs []*alone
	heap0 := heapInUse()
	var refPSS int64
	cell := "PSS"
	for i := range spaceRefs {
		a, _, _, err := b.launchAlone(ctx)
		if err != nil {
			return refs, err
		}
		refs = append(refs, a)
		p, n, err := groupPSS(a.pid)
		if err != nil {
			return refs, err
		}
		refPSS += p
		if i > 0 {
			cell += ","
		}
		cell += fmt.Sprintf(" %s MB (%d processes)", mb(p), n)
	}
	perRefHeap := (float64(heapInUse()) - float64(heap0)) / spaceRefs
	perRefPSS := float64(refPSS) / spaceRefs
	add(fmt.Sprintf("reference: a second browser launched per person (browsers.Launch + serve.Start, the bench page; %d of them, %d spaces open): its whole PSS, and this process's Go heap per browser", spaceRefs, spacesOpen),
		fmt.Sprintf("%s; Go heap %s MB per browser", cell, mbf(perRefHeap)))
	add("ratio memory per additional space / per second browser (browser PSS + Go heap)",
		fmt.Sprintf("%s (%s MB / %s MB)", times(perPSS+perHeap, perRefPSS+perRefHeap), mbf(perPSS+perHeap), mbf(perRefPSS+perRefHeap)))
	return refs, nil
}

// callRows adds the p50 of a tools/call of the bench page's echo tool
// inside the first space (spacesOpen open) and in the browser ref served
// alone, interleaved (Paired, after a warm-up), and their ratio against
// issue 38's target.
func (b *spacesBench) callRows(ctx context.Context, ref *alone, calls int, add func(what, value string)) error {
	inSpace, err := waitTool(ctx, b.clients[0], "echo_0", benchPageTools)
	if err != nil {
		return err
	}
	served, err := waitTool(ctx, ref.cs, "echo_0", benchPageTools)
	if err != nil {
		return err
	}
	viaSpace, viaAlone := caller(b.clients[0], inSpace), caller(ref.cs, served)
	if _, _, err := Paired(ctx, warmup, viaSpace, viaAlone); err != nil {
		return fmt.Errorf("spaces: warming up the calls: %w", err)
	}
	spaceL, aloneL, err := Paired(ctx, calls, viaSpace, viaAlone)
	if err != nil {
		return fmt.Errorf("spaces: call latency: %w", err)
	}
	add(fmt.Sprintf("tools/call into the bench page inside a space (%d spaces open in the shared browser; in-memory MCP client, %d, interleaved with the next row)", spacesOpen, calls), spaceL.summary())
	add(fmt.Sprintf("tools/call into the bench page in a browser served alone, as today (browsers.Launch + serve.Start; in-memory MCP client, %d)", calls), aloneL.summary())
	add(fmt.Sprintf("ratio space / served alone tools/call (target p50 ≤ %.2f×)", spaceCallTarget), ratios(spaceL, aloneL))
	return nil
}

// firstListRows times spaceNewcomers new persons' first complete
// tools/list, each in a space of its own opened at their first request,
// and as many second browsers launched and served alone, alternating which
// goes first, and adds both and the ratio of their medians.
func (b *spacesBench) firstListRows(ctx context.Context, add func(what, value string)) error {
	var opened, inSpace, ref Latencies
	missedSpace, missedRef := 0, 0
	for i := range spaceNewcomers {
		err := inTurn(i,
			func() error {
				o, l, missed, err := b.enter(ctx, fmt.Sprintf("newcomer-%d", i+1))
				opened, inSpace = append(opened, o), append(inSpace, l)
				if missed {
					missedSpace++
				}
				return err
			},
			func() error {
				a, took, missed, err := b.launchAlone(ctx)
				if err != nil {
					return err
				}
				a.close()
				ref = append(ref, took)
				if missed {
					missedRef++
				}
				return nil
			})
		if err != nil {
			return err
		}
	}
	lacked := func(n int) string {
		if n == 0 {
			return ""
		}
		return fmt.Sprintf("; %d of %d first lists lacked the page's tools", n, spaceNewcomers)
	}
	settle := fmt.Sprintf("both wait --settle's %v of quiet after the load, as launch does", ci.DefaultSettle)
	add(fmt.Sprintf("spaces: a new person's first request → tools/list with the start page's %d tools, in a space of their own (a browser context on a view of the shared browser's pipe, %d to %d spaces open; %d persons; %s)",
		benchPageTools, spacesOpen, spacesOpen+spaceNewcomers-1, spaceNewcomers, settle),
		fmt.Sprintf("%s; Space returned after p50 %s ms%s", spread(inSpace), ms(opened.Percentile(50)), lacked(missedSpace)))
	add(fmt.Sprintf("reference: a second browser launched for the person, served alone (browsers.Launch + serve.Start → the same list; %d, alternating with the spaces)", spaceNewcomers),
		spread(ref)+lacked(missedRef))
	add("ratio first complete list, space / second browser (p50s)", times(float64(inSpace.Percentile(50)), float64(ref.Percentile(50))))
	return nil
}

// connectInMemory connects an MCP client to srv over an in-memory
// transport.
func connectInMemory(ctx context.Context, srv *mcpserver.Server) (*mcp.ClientSession, error) {
	ct, st := mcp.NewInMemoryTransports()
	if _, err := srv.MCP().Connect(ctx, st, nil); err != nil {
		return nil, fmt.Errorf("spaces: connecting to the MCP server: %w", err)
	}
	cs, err := newClient(make(chan struct{}, 1)).Connect(ctx, ct, nil)
	if err != nil {
		return nil, fmt.Errorf("spaces: connecting the client: %w", err)
	}
	return cs, nil
}

// completeList lists the tools of cs until the list holds the bench
// page's, and says whether the first list lacked them.
func completeList(ctx context.Context, cs *mcp.ClientSession) (bool, error) {
	tools, err := listAll(ctx, cs)
	if err != nil {
		return false, err
	}
	if findTool(tools, "echo_0", benchPageTools) != "" {
		return false, nil
	}
	_, err = waitTool(ctx, cs, "echo_0", benchPageTools)
	return true, err
}

// newLeader returns the one process group leader among this process's
// children (groupLeaders) that before did not hold: the browser just
// launched.
func newLeader(before map[int]bool) (int, error) {
	after, err := groupLeaders()
	if err != nil {
		return 0, err
	}
	var found []int
	for pid := range after {
		if !before[pid] {
			found = append(found, pid)
		}
	}
	if len(found) != 1 {
		return 0, fmt.Errorf("spaces: looking for the browser just launched among this process's children, found %d new process groups (%v)", len(found), found)
	}
	return found[0], nil
}

// heapInUse is this process's Go heap in use after a collection
// (runtime.MemStats.HeapInuse).
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// mb renders bytes in MB for a cell.
func mb(b int64) string { return mbf(float64(b)) }

// mbf renders bytes in MB for a cell.
func mbf(b float64) string { return fmt.Sprintf("%.1f", b/(1<<20)) }
