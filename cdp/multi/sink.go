package multi

import (
	"sync"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// memberSink is the sink of one connection of one member: it puts the
// member's name in front of tab ids and document keys, sets Source.Browser,
// and remembers the tabs it reported so that, once the connection is lost
// (close), it closes them in the hub: their tools go to the cached state.
// After close it drops whatever the old connection still reports.
type memberSink struct {
	set  *Set
	sink Sink
	name string
	// named: the set has several members, so sources and tabs carry the
	// name (a lone browser, such as launch --relaunch's, keeps its tools'
	// provenance and names as they are without a set).
	named bool

	mu       sync.Mutex
	dead     bool
	inflight sync.WaitGroup // reports being passed on
	tabs     map[string]bool
}

func newMemberSink(s *Set, sink Sink, name string) *memberSink {
	return &memberSink{set: s, sink: sink, name: name, named: len(s.order) > 1, tabs: map[string]bool{}}
}

// enter starts passing a report on, with note run under the lock (to track
// tabs); it returns false once the connection is closed. The caller calls
// g.inflight.Done when the report is passed on.
func (g *memberSink) enter(note func()) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.dead {
		return false
	}
	if note != nil {
		note()
	}
	g.inflight.Add(1)
	return true
}

func (g *memberSink) id(id string) string { return g.set.ID(g.name, id) }

func (g *memberSink) source(src core.Source) core.Source {
	src.Key, src.Tab = g.id(src.Key), g.id(src.Tab)
	if g.named {
		src.Browser = g.name
	}
	return src
}

// Update passes a document's tools on.
func (g *memberSink) Update(src core.Source, tools []core.Tool, refused []core.Refusal) {
	if !g.enter(nil) {
		return
	}
	defer g.inflight.Done()
	g.set.noteOrigin(src.Origin, g.name)
	g.sink.Update(g.source(src), tools, refused)
}

// DropDoc passes a document's end on.
func (g *memberSink) DropDoc(key string) {
	if !g.enter(nil) {
		return
	}
	defer g.inflight.Done()
	g.sink.DropDoc(g.id(key))
}

// TabOpened passes a tab on.
func (g *memberSink) TabOpened(id, url, title string) {
	var first bool
	if !g.enter(func() { first = !g.tabs[id]; g.tabs[id] = true }) {
		return
	}
	defer g.inflight.Done()
	g.sink.TabOpened(g.id(id), url, title)
	if tb, ok := g.sink.(tabBrowserSink); ok && first && g.named {
		tb.SetTabBrowser(g.id(id), g.name)
	}
}

// TabClosed passes a tab's end on.
func (g *memberSink) TabClosed(id string) {
	if !g.enter(func() { delete(g.tabs, id) }) {
		return
	}
	defer g.inflight.Done()
	g.sink.TabClosed(g.id(id))
}

// PageServer passes an MCP-B page server on when the set's sink takes
// them; else it ends the pipe.
func (g *memberSink) PageServer(src core.Source, conn core.PageConn) {
	ps, ok := g.sink.(pageServerSink)
	if !ok || !g.enter(nil) {
		conn.Close()
		return
	}
	defer g.inflight.Done()
	ps.PageServer(g.source(src), conn)
}

// TabLoadedBefore passes on that a tab loaded before we attached.
func (g *memberSink) TabLoadedBefore(id string, before bool) {
	ps, ok := g.sink.(preexistingSink)
	if !ok || !g.enter(nil) {
		return
	}
	defer g.inflight.Done()
	ps.TabLoadedBefore(g.id(id), before)
}

// close ends the connection's reports: it waits for those being passed on,
// then tells the sink the tabs it reported are lost (TabLost, where the sink
// has it: *hub.Hub keeps their tools listed as cached), else closed.
func (g *memberSink) close() {
	g.mu.Lock()
	if g.dead {
		g.mu.Unlock()
		return
	}
	g.dead = true
	tabs := make([]string, 0, len(g.tabs))
	for id := range g.tabs {
		tabs = append(tabs, id)
	}
	g.mu.Unlock()
	g.inflight.Wait()
	lost, ok := g.sink.(tabLoser)
	for _, id := range tabs {
		if ok {
			lost.TabLost(g.id(id))
		} else {
			g.sink.TabClosed(g.id(id))
		}
	}
}
