package mcpserver

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file keeps the tools of a tools/list page out of the SDK's JSON
// path on stdio. The SDK compacts a result twice (jsonrpc2.NewResponse
// marshals it, EncodeMessage encodes the message again): for 2,200 tools,
// two passes over 1.5 MB. A stdio connection with a fast path registers as
// a splicer of its session; the ToolSet then hands the SDK a result whose
// page of tools is a marker (a JSON string naming the connection's random
// id and a sequence number), and the connection writes the page in the
// marker's place, from the tools' JSON as rendered once per tool. Everything else in
// the answer (the envelope, _meta, the server's own tools, the cursor)
// stays the SDK's.

// splicer is a connection that writes stashed bytes in place of markers.
type splicer interface {
	// stash keeps p and returns the marker to write in its place.
	stash(p toolsPage) string
}

// addSplicer registers the splicer of a session id until the returned
// func is called.
func (ts *ToolSet) addSplicer(id string, sp splicer) func() {
	ts.spliceMu.Lock()
	defer ts.spliceMu.Unlock()
	if ts.splicers == nil {
		ts.splicers = make(map[string]splicer)
	}
	ts.splicers[id] = sp
	return func() {
		ts.spliceMu.Lock()
		defer ts.spliceMu.Unlock()
		delete(ts.splicers, id)
	}
}

// splice puts a marker in place of out's tools when the session's
// connection splices: a stdio connection with a fast path registers its
// session id; every other session with an id is a streamable HTTP one,
// whose responses go through the HTTP endpoint's splicer when there is one.
func (ts *ToolSet) splice(ss *mcp.ServerSession, out *listResult) {
	if ss == nil || len(out.tools) == 0 {
		return
	}
	id := ss.ID()
	if id == "" {
		return
	}
	ts.spliceMu.Lock()
	sp, ok := ts.splicers[id]
	if !ok && ts.httpSplicer != nil {
		sp = ts.httpSplicer
	}
	ts.spliceMu.Unlock()
	if sp != nil {
		out.marker, out.tools = sp.stash(out.tools), nil
	}
}

// httpSplices returns the splicer of the sessions that registered none
// (the streamable HTTP sessions), made on first use and shared by every
// HTTP endpoint of the ToolSet.
func (ts *ToolSet) httpSplices() *splices {
	ts.spliceMu.Lock()
	defer ts.spliceMu.Unlock()
	if sp, ok := ts.httpSplicer.(*splices); ok {
		return sp
	}
	id := make([]byte, 8)
	rand.Read(id)
	sp := newSplices("http-" + hex.EncodeToString(id))
	sp.keep = 64
	ts.httpSplicer = sp
	return sp
}

// splices holds a connection's stashed pages until they are written. With
// keep set (HTTP), a page stays after it is written, for a stream that is
// resumed and replayed from the event store, and the oldest beyond keep
// go; a marker whose page went is written as an empty page.
type splices struct {
	keep   int
	order  []string // with keep: markers, oldest first
	prefix string
	seq    atomic.Uint64
	n      atomic.Int64 // entries in byMark, read without the lock
	mu     sync.Mutex
	byMark map[string]toolsPage
	pages  pageWriter
}

func newSplices(id string) *splices {
	return &splices{prefix: "webmcp-cdp-splice:" + id + ":", byMark: make(map[string]toolsPage)}
}

// stash implements splicer.
func (s *splices) stash(p toolsPage) string {
	m := s.prefix + strconv.FormatUint(s.seq.Add(1), 10)
	s.mu.Lock()
	s.byMark[m] = p
	s.n.Add(1)
	if s.keep > 0 {
		s.order = append(s.order, m)
		if len(s.order) > s.keep {
			delete(s.byMark, s.order[0])
			s.order = s.order[1:]
			s.n.Add(-1)
		}
	}
	s.mu.Unlock()
	return m
}

// cut finds a stashed marker in an encoded message and returns the parts
// to write: before the marker, the stashed page, after it. ok is false
// when the message has none.
func (s *splices) cut(data []byte) (before []byte, page toolsPage, after []byte, ok bool) {
	if s.n.Load() == 0 {
		return nil, nil, nil, false
	}
	i := bytes.Index(data, []byte(`"`+s.prefix))
	if i < 0 {
		return nil, nil, nil, false
	}
	end := bytes.IndexByte(data[i+1:], '"')
	if end < 0 {
		return nil, nil, nil, false
	}
	m := string(data[i+1 : i+1+end])
	s.mu.Lock()
	page, ok = s.byMark[m]
	if ok && s.keep == 0 {
		delete(s.byMark, m)
		s.n.Add(-1)
	}
	s.mu.Unlock()
	before, after = data[:i], data[i+1+end+1:]
	if !ok {
		if s.keep == 0 {
			return nil, nil, nil, false
		}
		// A replay whose page went: an empty page, so the JSON holds.
		before = bytes.TrimSuffix(before, []byte(","))
	}
	return before, page, after, true
}

// splicingWriter writes an HTTP response with stashed pages in place of
// their markers. The SDK writes each event (or JSON body) in one Write.
type splicingWriter struct {
	http.ResponseWriter
	sp *splices
}

func (w *splicingWriter) Write(b []byte) (int, error) {
	before, page, after, ok := w.sp.cut(b)
	if !ok {
		return w.ResponseWriter.Write(b)
	}
	if err := w.sp.pages.write(w.ResponseWriter, before, page, after); err != nil {
		return 0, err
	}
	return len(b), nil
}

// Unwrap lets http.ResponseController reach the connection (to flush).
func (w *splicingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// splicing wraps an HTTP MCP handler so that its responses carry the
// ToolSet's tools/list pages spliced in.
func (ts *ToolSet) splicing(next http.Handler) http.Handler {
	sp := ts.httpSplices()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(&splicingWriter{ResponseWriter: w, sp: sp}, r)
	})
}
