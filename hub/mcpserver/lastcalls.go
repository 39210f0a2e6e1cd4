package mcpserver

import (
	"sync"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
)

// The status page shows the session's last calls, and offers the calls as
// a spec to download. The list is kept from the first call, at no
// allocation per call; the spec's recorder (without --record) is hooked to
// the calls only from the first request of the page or of the download
// (docs/decisions/2026-12-03-call-hooks.md).

// lastCalls is how many calls the status page lists.
const lastCalls = 50

// callLog keeps the last calls for the status page: a ring of records
// written by a Record hook in the call's own goroutine, so a call pays a
// small lock and a copy for it, and no allocation.
type callLog struct {
	mu   sync.Mutex
	recs [lastCalls]hub.CallRecord
	next int // where the next record goes
	n    int // the records kept, up to lastCalls
}

func (l *callLog) add(r hub.CallRecord) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.recs[l.next] = r
	l.next = (l.next + 1) % len(l.recs)
	l.n = min(l.n+1, len(l.recs))
}

// list returns the calls, newest first.
func (l *callLog) list() []hub.CallRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]hub.CallRecord, l.n)
	for i := range out {
		out[i] = l.recs[(l.next-1-i+len(l.recs))%len(l.recs)]
	}
	return out
}

// recording is when the recorder was hooked to the calls, and what unhooks
// it when the server's context ends.
type recording struct {
	// lazy: the recorder is the server's own (no --record), hooked on the
	// status page's first request; set in New, read only after.
	lazy bool

	mu     sync.Mutex
	since  time.Time // zero until hooked
	unhook func()
	ended  bool // the server's context ended: never hook again
}

// startRecording hooks the recorder to the hub's calls unless it is
// already, and returns since when it is told of them. With --record it
// runs in New; else on the first request of the status page or of its
// download, so that the calls before are not recorded and pay nothing.
func (s *Server) startRecording() time.Time {
	r := &s.recording
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.since.IsZero() && !r.ended {
		r.since = time.Now()
		r.unhook = s.hub.HookCalls(hub.CallHooks{Detail: s.recorder.Call})
	}
	return r.since
}

// stopRecording unhooks the recorder for good (the server's context ended).
func (s *Server) stopRecording() {
	r := &s.recording
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ended = true
	if r.unhook != nil {
		r.unhook()
	}
}
