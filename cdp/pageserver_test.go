package cdp

import (
	"log/slog"
	"slices"
	"strconv"
	"testing"
)

// TestDeliverTakeOrder: takes of the page's queue come back through the
// standing wait, a pull and the sends of requests, in any order; their
// messages reach the pipe in the order the page took them.
func TestDeliverTakeOrder(t *testing.T) {
	tests := []struct {
		name string
		seqs []uint64 // the order the takes come back in; take n holds message "n"
		want []string
	}{
		{"in order", []uint64{1, 2, 3}, []string{"1", "2", "3"}},
		{"the send's answer before the wait's", []uint64{2, 1, 3}, []string{"1", "2", "3"}},
		{"reversed", []uint64{3, 2, 1}, []string{"1", "2", "3"}},
		{"a gap closed last", []uint64{1, 3, 4, 2}, []string{"1", "2", "3", "4"}},
		{"unnumbered at once", []uint64{0, 2, 1}, []string{"0", "1", "2"}},
		// Take 1 is lost: once more than maxEarlyTakes wait, they go in
		// their order; take 1, if it comes after all, goes at once.
		{"a take lost", append(seqRange(2, 3+maxEarlyTakes), 1, 3+maxEarlyTakes), append(strs(2, 3+maxEarlyTakes), "1", strconv.Itoa(3+maxEarlyTakes))},
		{"a take lost, fewer waiting", []uint64{2, 3}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &Browser{logger: slog.New(slog.DiscardHandler)}
			d := &docState{alive: true}
			pp := &pagePipe{in: make(chan []byte, 64), done: make(chan struct{}), dropWake: make(chan struct{}, 1)}
			ps := &psDoc{pipes: map[string]*pagePipe{"t:mcp-default": pp}}
			for _, s := range tt.seqs {
				n := strconv.FormatUint(s, 10)
				b.deliverTakeLocked(d, ps, psTake{Seq: s, Msgs: []psEntry{{T: "msg", S: "t:mcp-default", D: n}}})
			}
			var got []string
			for len(pp.in) > 0 {
				got = append(got, string(<-pp.in))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("delivered %v, want %v", got, tt.want)
			}
		})
	}
}

// TestDeliverFullTakeThenWaiting: the page's full queue in one take, then
// the answer that came back first through a send and waited for it: with
// no reader yet, the pipe holds both, and nothing is dropped.
func TestDeliverFullTakeThenWaiting(t *testing.T) {
	b := &Browser{logger: slog.New(slog.DiscardHandler)}
	d := &docState{alive: true}
	pp := &pagePipe{in: make(chan []byte, pageServerBacklog), done: make(chan struct{}), dropWake: make(chan struct{}, 1)}
	ps := &psDoc{pipes: map[string]*pagePipe{"t:mcp-default": pp}}
	full := make([]psEntry, pageQueueMessages)
	for i := range full {
		full[i] = psEntry{T: "msg", S: "t:mcp-default", D: "note"}
	}
	b.deliverTakeLocked(d, ps, psTake{Seq: 2, Msgs: []psEntry{{T: "msg", S: "t:mcp-default", D: "answer"}}})
	b.deliverTakeLocked(d, ps, psTake{Seq: 1, Msgs: full})
	if got := len(pp.in); got != pageQueueMessages+1 {
		t.Fatalf("the pipe holds %d messages, want %d", got, pageQueueMessages+1)
	}
	if dropped := pp.Dropped(); len(dropped) != 0 {
		t.Errorf("dropped %v", dropped)
	}
	for range pageQueueMessages {
		<-pp.in
	}
	if got := string(<-pp.in); got != "answer" {
		t.Errorf("last message %q, want the answer", got)
	}
}

// seqRange returns from, from+1, ..., to-1.
func seqRange(from, to uint64) []uint64 {
	var out []uint64
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

// strs returns the decimal strings of from, ..., to-1.
func strs(from, to uint64) []string {
	var out []string
	for _, s := range seqRange(from, to) {
		out = append(out, strconv.FormatUint(s, 10))
	}
	return out
}

// TestLostTake: when a take call fails, the page may have used its number
// up: the takes held for it go at once, in order, and the next numbered take
// is not held for it either.
func TestLostTake(t *testing.T) {
	b := &Browser{logger: slog.New(slog.DiscardHandler)}
	d := &docState{alive: true}
	pp := &pagePipe{in: make(chan []byte, 64), done: make(chan struct{}), dropWake: make(chan struct{}, 1)}
	ps := &psDoc{pipes: map[string]*pagePipe{"t:mcp-default": pp}}
	take := func(s uint64) {
		b.deliverTakeLocked(d, ps, psTake{Seq: s, Msgs: []psEntry{{T: "msg", S: "t:mcp-default", D: strconv.FormatUint(s, 10)}}})
	}
	read := func() []string {
		var got []string
		for len(pp.in) > 0 {
			got = append(got, string(<-pp.in))
		}
		return got
	}
	take(1)
	take(3) // 2 is on its way
	take(4)
	if got := read(); !slices.Equal(got, []string{"1"}) {
		t.Fatalf("before the failure: delivered %v, want [1]", got)
	}
	b.lostTakeLocked(d, ps) // the call carrying 2 failed
	if got := read(); !slices.Equal(got, []string{"3", "4"}) {
		t.Fatalf("at the failure: delivered %v, want [3 4]", got)
	}
	b.lostTakeLocked(d, ps) // another call failed, its number (5) unseen
	take(6)
	take(7)
	if got := read(); !slices.Equal(got, []string{"6", "7"}) {
		t.Errorf("after a second failure: delivered %v, want [6 7]", got)
	}
}

// TestPipeBacklogBytes: a pipe holds at most pageServerBacklogBytes of
// messages for its reader; past that they are dropped as "backlog", and
// reading makes room again.
func TestPipeBacklogBytes(t *testing.T) {
	pp := &pagePipe{in: make(chan []byte, pageServerBacklog), done: make(chan struct{}), dropWake: make(chan struct{}, 1)}
	big := make([]byte, 1<<20)
	n := pageServerBacklogBytes / len(big)
	for range n + 3 {
		pp.deliver(big)
	}
	if got := len(pp.in); got != n {
		t.Fatalf("the pipe holds %d messages of 1 MiB, want %d", got, n)
	}
	if got := pp.Dropped()["backlog"]; got != 3 {
		t.Errorf("dropped %d as backlog, want 3", got)
	}
	if _, err := pp.Recv(t.Context()); err != nil {
		t.Fatal(err)
	}
	pp.deliver(big)
	if got := len(pp.in); got != n {
		t.Errorf("after one read and one more message the pipe holds %d, want %d", got, n)
	}
}
