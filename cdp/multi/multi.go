// Package multi serves several named browsers through one hub: a Set is one
// browser for the hub (hub.Browser, hub.Opener, hub.TabCloser and the MCP
// server's Tabs) made of members, each a browser with a short name. The
// hub's tab ids and document keys are the member's own with the member's
// name in front ("b2/<id>"), and each document's core.Source carries the
// name, so the provenance of a routed tool says which browser it leads to.
//
// One browser served alone is a set of one unnamed member (New with the one
// name ""): its ids, keys and sources are the browser's own, unprefixed.
//
// A member that drops (its connection ends) has its tabs closed in the hub,
// so its tools go to the cached state, while Supervise reconnects it with
// backoff; the other members go on untouched. It knows neither CDP nor MCP:
// cdp/fleet gives it members built on *cdp.Browser.
package multi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"strings"
	"sync"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// Member is what a Set needs from one browser. *cdp.Browser implements it.
type Member interface {
	Invoke(ctx context.Context, docKey, tool string, input json.RawMessage) (core.Result, error)
	Open(ctx context.Context, url string) (string, error)
	CloseTab(ctx context.Context, tab string) error
	ActivateTab(ctx context.Context, tab string) error
	Reload(ctx context.Context, tab string) error
}

// Sink is what a Set reports to (the hub): cdp.Sink's methods. When it
// also has PageServer or TabLoadedBefore (*hub.Hub has both), the members'
// sinks pass those on too.
type Sink interface {
	Update(src core.Source, tools []core.Tool, refused []core.Refusal)
	DropDoc(key string)
	TabOpened(id, url, title string)
	TabClosed(id string)
}

type pageServerSink interface {
	PageServer(src core.Source, conn core.PageConn)
}

// tabLoser is a Sink that keeps the tools of a tab whose browser dropped
// (*hub.Hub does).
type tabLoser interface {
	TabLost(id string)
}

// tabBrowserSink is a Sink that learns which browser a tab is in
// (*hub.Hub does, for webmcp_list_tabs and the status page).
type tabBrowserSink interface {
	SetTabBrowser(id, browser string)
}

type preexistingSink interface {
	TabLoadedBefore(id string, before bool)
}

// The states of a member.
const (
	// StateConnecting: not connected yet, or reconnecting after a drop.
	StateConnecting = "connecting"
	// StateUp: connected, its tabs followed.
	StateUp = "up"
	// StateStopped: Supervise ended (its context ended or dial said the
	// browser is gone for good).
	StateStopped = "stopped"
)

// maxNameLen is the longest browser name: it goes into tool descriptions
// and, when two browsers serve one site, into tool names.
const maxNameLen = 16

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

// CheckName reports whether name may name a browser: 1 to 16 of a-z, 0-9
// and "-", starting with a letter or digit.
func CheckName(name string) error {
	if len(name) > maxNameLen || !nameRE.MatchString(name) {
		return fmt.Errorf("browser name %q: use 1 to %d characters of a-z, 0-9 and '-' (such as local, grid or b2)", name, maxNameLen)
	}
	return nil
}

// maxOrigins bounds the origins remembered for Open (which browser served
// an origin last); past it the memory starts over.
const maxOrigins = 4096

// Set is several named browsers as one. Its methods are safe for concurrent
// use.
type Set struct {
	logger *slog.Logger

	mu      sync.Mutex
	order   []string // the names, as given
	members map[string]*member
	// origins is which member served each origin last (for Open).
	origins map[string]string
}

// member is one named browser and its current connection.
type member struct {
	name  string
	state string
	err   error  // why it dropped or last failed to connect
	b     Member // nil unless up
	drops int    // connections lost so far
}

// New returns a set with one member per name, each connecting until
// Supervise connects it. A lone name "" makes the set of one unnamed
// browser, whose ids stay the browser's own.
func New(names []string, logger *slog.Logger) (*Set, error) {
	if logger == nil {
		logger = slog.Default()
	}
	s := &Set{logger: logger, members: map[string]*member{}, origins: map[string]string{}}
	for _, n := range names {
		if err := CheckName(n); err != nil && (n != "" || len(names) > 1) {
			return nil, err
		}
		if s.members[n] != nil {
			return nil, fmt.Errorf("browser name %q is given twice; give each browser its own name", n)
		}
		s.order = append(s.order, n)
		s.members[n] = &member{name: n, state: StateConnecting}
	}
	if len(s.order) == 0 {
		return nil, errors.New("no browser given")
	}
	return s, nil
}

// Status describes a member for the log and the status page.
type Status struct {
	Name  string `json:"name"`
	State string `json:"state"`
	// Error is why it dropped or last failed to connect (empty when up).
	Error string `json:"error,omitempty"`
	// Drops counts the connections it lost.
	Drops int `json:"drops,omitempty"`
}

// Statuses returns the members' states, in the order given.
func (s *Set) Statuses() []Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Status, 0, len(s.order))
	for _, n := range s.order {
		m := s.members[n]
		st := Status{Name: n, State: m.state, Drops: m.drops}
		if m.err != nil && m.state != StateUp {
			st.Error = m.err.Error()
		}
		out = append(out, st)
	}
	return out
}

// unnamed reports whether the set is one browser served alone, whose ids
// carry no name.
func (s *Set) unnamed() bool { return len(s.order) == 1 && s.order[0] == "" }

// ID is the set's id of a member's own tab id or document key: the
// member's name in front ("b2/<id>"), or id itself for the unnamed browser.
func (s *Set) ID(name, id string) string {
	if name == "" {
		return id
	}
	return name + "/" + id
}

// split cuts a set's id into the member's name and its own id ("name/id",
// or the unnamed browser's id as it is).
func (s *Set) split(id string) (name, rest string, ok bool) {
	if s.unnamed() {
		return "", id, true
	}
	return strings.Cut(id, "/")
}

// up returns the member a set's id belongs to and its own id, or an error
// that says the browser is not connected.
func (s *Set) up(id, what string) (Member, string, error) {
	name, rest, ok := s.split(id)
	if !ok {
		return nil, "", fmt.Errorf("%s %q names no browser", what, id)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.members[name]
	if m == nil {
		return nil, "", fmt.Errorf("%s %q: no browser is named %q", what, id, name)
	}
	if m.b == nil {
		return nil, "", downError(m)
	}
	return m.b, rest, nil
}

// downError is the error of a call to a member that is not connected.
func downError(m *member) error {
	if m.name == "" {
		if m.state == StateStopped {
			return errors.New("the browser is gone; restart webmcp-cdp once it is back")
		}
		return errors.New("the browser is not connected yet: try again shortly")
	}
	if m.state == StateStopped {
		return fmt.Errorf("browser %q is gone and will not be reconnected; restart webmcp-cdp once it is back", m.name)
	}
	return fmt.Errorf("browser %q is not connected (reconnecting; its tools come back when it does): try again shortly, or use another browser's tools", m.name)
}

// Invoke runs a tool in the member the document key names.
func (s *Set) Invoke(ctx context.Context, docKey, tool string, input json.RawMessage) (core.Result, error) {
	b, key, err := s.up(docKey, "document")
	if err != nil {
		return core.Result{}, err
	}
	return b.Invoke(ctx, key, tool, input)
}

// CloseTab closes a tab of the member its id names.
func (s *Set) CloseTab(ctx context.Context, tab string) error {
	b, id, err := s.up(tab, "tab")
	if err != nil {
		return err
	}
	return b.CloseTab(ctx, id)
}

// ActivateTab brings a tab of the member its id names to the front.
func (s *Set) ActivateTab(ctx context.Context, tab string) error {
	b, id, err := s.up(tab, "tab")
	if err != nil {
		return err
	}
	return b.ActivateTab(ctx, id)
}

// Reload reloads a tab of the member its id names.
func (s *Set) Reload(ctx context.Context, tab string) error {
	b, id, err := s.up(tab, "tab")
	if err != nil {
		return err
	}
	return b.Reload(ctx, id)
}

// drainer is a Member that can wait for what its tabs had due
// (*cdp.Browser does).
type drainer interface {
	DrainTabs(ctx context.Context, tabs []string)
}

// DrainTabs returns when each of the set's tabs answered or gave up, each
// member draining its own tabs at once (a member that cannot drain, or is
// not connected, is skipped).
func (s *Set) DrainTabs(ctx context.Context, tabs []string) {
	own := map[string][]string{}
	for _, id := range tabs {
		if name, rest, ok := s.split(id); ok {
			own[name] = append(own[name], rest)
		}
	}
	var wg sync.WaitGroup
	for name, ids := range own {
		s.mu.Lock()
		m := s.members[name]
		var d drainer
		if m != nil {
			d, _ = m.b.(drainer)
		}
		s.mu.Unlock()
		if d != nil {
			wg.Go(func() { d.DrainTabs(ctx, ids) })
		}
	}
	wg.Wait()
}

// hinter is a Member that can show a tab client hints (*cdp.Browser can).
type hinter interface {
	ShowHints(ctx context.Context, tab string, ch core.HintChange) (func(), error)
}

// ShowHints has the tab its id names show ch (hub.Hinter); a member that
// cannot leaves its tabs as they are.
func (s *Set) ShowHints(ctx context.Context, tab string, ch core.HintChange) (func(), error) {
	b, id, err := s.up(tab, "tab")
	if err != nil {
		return nil, err
	}
	h, ok := b.(hinter)
	if !ok {
		return func() {}, nil
	}
	return h.ShowHints(ctx, id, ch)
}

// titler is a Member that can say its tabs' titles (*cdp.Browser can).
type titler interface {
	Titles(ctx context.Context) (map[string]string, error)
}

// Titles returns the current title of every tab of the members connected,
// by the set's tab id, asking them at once. A member that cannot say, or
// fails to, is left out (its tabs show no title); the error is the first
// such failure, returned with the titles the others gave.
func (s *Set) Titles(ctx context.Context) (map[string]string, error) {
	s.mu.Lock()
	ts := map[string]titler{}
	for name, m := range s.members {
		if t, ok := m.b.(titler); ok {
			ts[name] = t
		}
	}
	s.mu.Unlock()
	var (
		mu    sync.Mutex
		out   = map[string]string{}
		first error
		wg    sync.WaitGroup
	)
	for name, t := range ts {
		wg.Go(func() {
			titles, err := t.Titles(ctx)
			mu.Lock()
			defer mu.Unlock()
			if err != nil && first == nil {
				first = err
			}
			for id, title := range titles {
				out[s.ID(name, id)] = title
			}
		})
	}
	wg.Wait()
	return out, first
}

// Open opens rawURL in a new tab of the browser that served its origin
// last, else of the first browser connected, and returns the tab's id. A
// cached tool's page thus reopens in the browser it came from: while that
// browser reconnects, Open fails and says so rather than opening it in
// another.
func (s *Set) Open(ctx context.Context, rawURL string) (string, error) {
	name, b, err := s.pick(rawURL)
	if err != nil {
		return "", err
	}
	id, err := b.Open(ctx, rawURL)
	if id != "" {
		id = s.ID(name, id)
	}
	return id, err
}

// OpenIn opens rawURL in a new tab of the named browser.
func (s *Set) OpenIn(ctx context.Context, name, rawURL string) (string, error) {
	s.mu.Lock()
	m := s.members[name]
	var b Member
	if m != nil {
		b = m.b
	}
	s.mu.Unlock()
	switch {
	case m == nil:
		return "", fmt.Errorf("no browser is named %q; the browsers are %s", name, strings.Join(s.order, ", "))
	case b == nil:
		s.mu.Lock()
		err := downError(m)
		s.mu.Unlock()
		return "", err
	}
	id, err := b.Open(ctx, rawURL)
	if id != "" {
		id = s.ID(name, id)
	}
	return id, err
}

func (s *Set) pick(rawURL string) (string, Member, error) {
	origin := originOf(rawURL)
	s.mu.Lock()
	defer s.mu.Unlock()
	if n, ok := s.origins[origin]; ok && origin != "" {
		m := s.members[n]
		if m.b == nil {
			return "", nil, fmt.Errorf("%s was served by browser %q: %w", origin, n, downError(m))
		}
		return n, m.b, nil
	}
	for _, n := range s.order {
		if m := s.members[n]; m.b != nil {
			return n, m.b, nil
		}
	}
	return "", nil, errors.New("no browser is connected (all are reconnecting): try again shortly")
}

// originOf returns scheme://host[:port] of a URL, or "" when it has none.
func originOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// noteOrigin remembers that name served origin.
func (s *Set) noteOrigin(origin, name string) {
	if origin == "" || origin == "null" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.origins[origin] == name {
		return
	}
	if len(s.origins) >= maxOrigins {
		clear(s.origins)
	}
	s.origins[origin] = name
}
