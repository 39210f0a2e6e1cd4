package multi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

// quiet is the sets' logger in tests.
func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

// fakeMember records what it was asked, as "Method arg".
type fakeMember struct {
	mu  sync.Mutex
	did []string
}

func (m *fakeMember) note(s string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.did = append(m.did, s)
}

func (m *fakeMember) last() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.did) == 0 {
		return ""
	}
	return m.did[len(m.did)-1]
}

func (m *fakeMember) Invoke(_ context.Context, key, tool string, _ json.RawMessage) (core.Result, error) {
	m.note("Invoke " + key + " " + tool)
	return core.Result{Kind: "string", Value: key}, nil
}

// Titles says the member has one tab, T, titled with its first call.
func (m *fakeMember) Titles(context.Context) (map[string]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.did) == 0 {
		return nil, errors.New("no titles yet")
	}
	return map[string]string{"T": m.did[0]}, nil
}

func (m *fakeMember) Open(_ context.Context, url string) (string, error) {
	m.note("Open " + url)
	return "T-new", nil
}

func (m *fakeMember) CloseTab(_ context.Context, tab string) error {
	m.note("CloseTab " + tab)
	return nil
}

func (m *fakeMember) ActivateTab(_ context.Context, tab string) error {
	m.note("ActivateTab " + tab)
	return nil
}

func (m *fakeMember) Reload(_ context.Context, tab string) error {
	m.note("Reload " + tab)
	return nil
}

// recSink records the reports as "Method args"; events gets each one.
type recSink struct {
	mu     sync.Mutex
	got    []string
	events chan string
}

func newRecSink() *recSink { return &recSink{events: make(chan string, 100)} }

func (s *recSink) add(e string) {
	s.mu.Lock()
	s.got = append(s.got, e)
	s.mu.Unlock()
	s.events <- e
}

func (s *recSink) Update(src core.Source, tools []core.Tool, _ []core.Refusal) {
	s.add(fmt.Sprintf("Update %s %s %s %d", src.Key, src.Tab, src.Browser, len(tools)))
}
func (s *recSink) DropDoc(key string)                { s.add("DropDoc " + key) }
func (s *recSink) TabOpened(id, _, _ string)         { s.add("TabOpened " + id) }
func (s *recSink) TabClosed(id string)               { s.add("TabClosed " + id) }
func (s *recSink) TabLost(id string)                 { s.add("TabLost " + id) }
func (s *recSink) TabLoadedBefore(id string, _ bool) { s.add("TabLoadedBefore " + id) }

// expect waits for the next report and checks it.
func (s *recSink) expect(t *testing.T, want string) {
	t.Helper()
	select {
	case got := <-s.events:
		if got != want {
			t.Fatalf("report %q, want %q", got, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("no report; want %q", want)
	}
}

// upSet returns a set whose members are up with the given fakes, and their
// sinks.
func upSet(t *testing.T, sink Sink, members map[string]*fakeMember, order ...string) (*Set, map[string]*memberSink) {
	t.Helper()
	s, err := New(order, quiet())
	if err != nil {
		t.Fatal(err)
	}
	sinks := map[string]*memberSink{}
	for _, n := range order {
		if m := members[n]; m != nil {
			s.setState(n, StateUp, nil, m)
			sinks[n] = newMemberSink(s, sink, n)
		}
	}
	return s, sinks
}

func TestCheckName(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"local", true}, {"b2", true}, {"grid-eu-1", true}, {"0", true},
		{"", false}, {"Grid", false}, {"-a", false}, {"a/b", false}, {"a_b", false},
		{strings.Repeat("a", 17), false}, {strings.Repeat("a", 16), true},
	} {
		if err := CheckName(tc.name); (err == nil) != tc.ok {
			t.Errorf("CheckName(%q) = %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}

func TestNewRefuses(t *testing.T) {
	for _, names := range [][]string{nil, {"a", "a"}, {"a", "B"}, {"", "a"}, {"a", ""}} {
		if _, err := New(names, nil); err == nil {
			t.Errorf("New(%q) gave no error", names)
		}
	}
}

// TestRouting: reports come out with the browser's name in front of tab ids
// and document keys and in Source.Browser; calls go to the member the id
// names, with its own id; a member that is down, or a name that is not a
// browser's, gets an error that says so.
func TestRouting(t *testing.T) {
	a, b := &fakeMember{}, &fakeMember{}
	rec := newRecSink()
	s, sinks := upSet(t, rec, map[string]*fakeMember{"a": a, "b": b}, "a", "b", "c")
	sinks["b"].TabOpened("T1", "http://x/", "X")
	rec.expect(t, "TabOpened b/T1")
	sinks["b"].Update(core.Source{Key: "K1", Tab: "T1", Origin: "http://x"}, []core.Tool{{Name: "t"}}, nil)
	rec.expect(t, "Update b/K1 b/T1 b 1")
	sinks["b"].TabLoadedBefore("T1", true)
	rec.expect(t, "TabLoadedBefore b/T1")
	sinks["a"].DropDoc("K7")
	rec.expect(t, "DropDoc a/K7")

	ctx := context.Background()
	for _, tc := range []struct {
		do      func() error
		member  *fakeMember
		want    string
		wantErr string
	}{
		{do: func() error { _, err := s.Invoke(ctx, "b/K1", "t", nil); return err }, member: b, want: "Invoke K1 t"},
		{do: func() error { _, err := s.Invoke(ctx, "a/K/with/slash", "t", nil); return err }, member: a, want: "Invoke K/with/slash t"},
		{do: func() error { return s.CloseTab(ctx, "a/T3") }, member: a, want: "CloseTab T3"},
		{do: func() error { return s.ActivateTab(ctx, "b/T1") }, member: b, want: "ActivateTab T1"},
		{do: func() error { return s.Reload(ctx, "b/T1") }, member: b, want: "Reload T1"},
		{do: func() error { return s.Reload(ctx, "c/T1") }, wantErr: `browser "c" is not connected`},
		{do: func() error { return s.Reload(ctx, "zz/T1") }, wantErr: `no browser is named "zz"`},
		{do: func() error { return s.Reload(ctx, "T1") }, wantErr: "names no browser"},
	} {
		err := tc.do()
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %v, want one with %q", err, tc.wantErr)
			}
		case err != nil:
			t.Errorf("want %q: %v", tc.want, err)
		case tc.member.last() != tc.want:
			t.Errorf("the member did %q, want %q", tc.member.last(), tc.want)
		}
	}
}

// TestUnnamed: one browser served alone keeps its own ids and keys, and
// its sources name no browser; its calls go to it with the ids as they are,
// and while it is down a call says so without naming it.
func TestUnnamed(t *testing.T) {
	a := &fakeMember{}
	rec := newRecSink()
	s, sinks := upSet(t, rec, map[string]*fakeMember{"": a}, "")
	sinks[""].TabOpened("T1", "http://x/", "X")
	rec.expect(t, "TabOpened T1")
	sinks[""].Update(core.Source{Key: "K1", Tab: "T1", Origin: "http://x"}, []core.Tool{{Name: "t"}}, nil)
	rec.expect(t, "Update K1 T1  1")
	ctx := context.Background()
	if _, err := s.Invoke(ctx, "K1", "t", nil); err != nil || a.last() != "Invoke K1 t" {
		t.Errorf("Invoke: %v; the browser did %q", err, a.last())
	}
	if id, err := s.Open(ctx, "http://x/2"); err != nil || id != "T-new" {
		t.Errorf("Open: %q, %v; want T-new", id, err)
	}
	if got := s.ID("", "T1"); got != "T1" {
		t.Errorf("ID: %q", got)
	}
	s.setState("", StateStopped, errors.New("gone"), nil)
	if err := s.Reload(ctx, "T1"); err == nil || err.Error() != "the browser is gone; restart webmcp-cdp once it is back" {
		t.Errorf("Reload of a browser gone: %v", err)
	}
}

// TestTitles: the members' titles under the set's tab ids, a member that
// fails left out with its error, a member not up left out.
func TestTitles(t *testing.T) {
	tests := []struct {
		name    string
		members map[string]*fakeMember
		order   []string
		want    map[string]string
		err     bool
	}{
		{name: "unnamed", members: map[string]*fakeMember{"": {did: []string{"one"}}}, order: []string{""}, want: map[string]string{"T": "one"}},
		{name: "two named", members: map[string]*fakeMember{"a": {did: []string{"A"}}, "b": {did: []string{"B"}}}, order: []string{"a", "b"}, want: map[string]string{"a/T": "A", "b/T": "B"}},
		{name: "one fails", members: map[string]*fakeMember{"a": {did: []string{"A"}}, "b": {}}, order: []string{"a", "b"}, want: map[string]string{"a/T": "A"}, err: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := upSet(t, newRecSink(), tt.members, tt.order...)
			got, err := s.Titles(context.Background())
			if !maps.Equal(got, tt.want) || (err != nil) != tt.err {
				t.Errorf("Titles: %v, %v; want %v (error %v)", got, err, tt.want, tt.err)
			}
		})
	}
	s, _ := upSet(t, newRecSink(), map[string]*fakeMember{"a": {did: []string{"A"}}, "b": {did: []string{"B"}}}, "a", "b")
	s.setState("b", StateConnecting, errors.New("dropped"), nil)
	if got, err := s.Titles(context.Background()); err != nil || !maps.Equal(got, map[string]string{"a/T": "A"}) {
		t.Errorf("Titles with b down: %v, %v", got, err)
	}
}

// TestOpen: a URL opens in the browser that served its origin last, else
// in the first browser up; while the origin's browser is down, Open says so
// instead of opening the page elsewhere.
func TestOpen(t *testing.T) {
	a, b := &fakeMember{}, &fakeMember{}
	rec := newRecSink()
	s, sinks := upSet(t, rec, map[string]*fakeMember{"a": a, "b": b}, "a", "b")
	sinks["b"].Update(core.Source{Key: "K", Tab: "T", Origin: "http://shop:8080"}, nil, nil)
	rec.expect(t, "Update b/K b/T b 0")
	ctx := context.Background()

	if id, err := s.Open(ctx, "http://shop:8080/cart"); err != nil || id != "b/T-new" || b.last() != "Open http://shop:8080/cart" {
		t.Errorf("Open of the shop gave %q, %v; b did %q", id, err, b.last())
	}
	if id, err := s.Open(ctx, "http://other/"); err != nil || id != "a/T-new" {
		t.Errorf("Open of another origin gave %q, %v, want a's tab", id, err)
	}
	if id, err := s.OpenIn(ctx, "b", "http://other/"); err != nil || id != "b/T-new" {
		t.Errorf("OpenIn b gave %q, %v", id, err)
	}
	s.setState("b", StateConnecting, errors.New("gone"), nil)
	if _, err := s.Open(ctx, "http://shop:8080/cart"); err == nil || !strings.Contains(err.Error(), `browser "b" is not connected`) {
		t.Errorf("Open with the shop's browser down: %v", err)
	}
	s.setState("a", StateConnecting, errors.New("gone"), nil)
	if _, err := s.Open(ctx, "http://other/"); err == nil || !strings.Contains(err.Error(), "no browser is connected") {
		t.Errorf("Open with every browser down: %v", err)
	}
}

// TestSupervise: a member that drops has its tabs lost in the sink (not
// closed), the old connection's late reports are dropped, attempts that
// fail are retried, and the new connection's reports flow again.
func TestSupervise(t *testing.T) {
	rec := newRecSink()
	s, err := New([]string{"c"}, quiet())
	if err != nil {
		t.Fatal(err)
	}
	type conn struct {
		sink Sink
		lost chan error
	}
	attempts := make(chan conn)
	fails := 1 // the attempt after the drop fails once
	dial := func(ctx context.Context, a *Attempt) (<-chan error, error) {
		c := conn{sink: a.Sink(), lost: make(chan error, 1)}
		fail := s.Statuses()[0].Drops == 1 && fails > 0
		if fail {
			fails--
		} else {
			a.Up(&fakeMember{}) // before the test hears of the attempt
		}
		select {
		case attempts <- c:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if fail {
			return nil, errors.New("connection refused")
		}
		return c.lost, nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Supervise(ctx, "c", rec, dial, Backoff{Min: time.Millisecond, Max: 4 * time.Millisecond})
	}()

	first := <-attempts
	first.sink.TabOpened("T1", "http://x/", "")
	rec.expect(t, "TabOpened c/T1")
	first.lost <- errors.New("EOF")
	rec.expect(t, "TabLost c/T1")
	first.sink.TabOpened("T2", "http://x/", "") // late: dropped
	<-attempts                                  // fails
	second := <-attempts
	second.sink.TabOpened("T5", "http://x/", "")
	rec.expect(t, "TabOpened c/T5")
	if st := s.Statuses()[0]; st.State != StateUp || st.Drops != 1 {
		t.Errorf("status %+v, want up after 1 drop", st)
	}
	cancel()
	<-done
	if st := s.Statuses()[0]; st.State != StateStopped {
		t.Errorf("status after the end %+v, want stopped", st)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if slices.Contains(rec.got, "TabOpened c/T2") {
		t.Errorf("a report of the lost connection got through: %v", rec.got)
	}
}

// TestSuperviseStops: ErrStop from the connection ends the supervision.
func TestSuperviseStops(t *testing.T) {
	s, err := New([]string{"a"}, quiet())
	if err != nil {
		t.Fatal(err)
	}
	dial := func(_ context.Context, a *Attempt) (<-chan error, error) {
		a.Up(&fakeMember{})
		lost := make(chan error, 1)
		lost <- fmt.Errorf("%w: no WebMCP in this browser", ErrStop)
		return lost, nil
	}
	s.Supervise(context.Background(), "a", newRecSink(), dial, Backoff{Min: time.Millisecond, Max: time.Millisecond})
	if st := s.Statuses()[0]; st.State != StateStopped || !strings.Contains(st.Error, "no WebMCP") {
		t.Errorf("status %+v, want stopped with the reason", st)
	}
	if _, err := s.Invoke(context.Background(), "a/K", "t", nil); err == nil || !strings.Contains(err.Error(), "will not be reconnected") {
		t.Errorf("a call to a stopped browser: %v", err)
	}
}

func TestBackoffDelay(t *testing.T) {
	bo := Backoff{Min: 100 * time.Millisecond, Max: time.Second}
	for _, tc := range []struct {
		n    int
		full time.Duration
	}{{0, 100 * time.Millisecond}, {1, 200 * time.Millisecond}, {3, 800 * time.Millisecond}, {4, time.Second}, {60, time.Second}} {
		for range 20 {
			if d := bo.delay(tc.n); d < tc.full/2 || d > tc.full {
				t.Errorf("delay(%d) = %s, want within [%s, %s]", tc.n, d, tc.full/2, tc.full)
			}
		}
	}
}
