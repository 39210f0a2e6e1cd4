package mcpserver

import (
	"bytes"
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
// id and a sequence number), and the connection writes the page's bytes,
// rendered once per snapshot, in the marker's place. Everything else in
// the answer (the envelope, _meta, the server's own tools, the cursor)
// stays the SDK's.

// splicer is a connection that writes stashed bytes in place of markers.
type splicer interface {
	// stash keeps b and returns the marker to write in its place.
	stash(b []byte) string
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
// connection splices.
func (ts *ToolSet) splice(ss *mcp.ServerSession, out *listResult) {
	if ss == nil || len(out.tools) == 0 {
		return
	}
	id := ss.ID()
	if id == "" {
		return
	}
	ts.spliceMu.Lock()
	sp := ts.splicers[id]
	ts.spliceMu.Unlock()
	if sp != nil {
		out.marker, out.tools = sp.stash(out.tools), nil
	}
}

// splices holds a stdio connection's stashed pages until they are written.
type splices struct {
	prefix string
	seq    atomic.Uint64
	n      atomic.Int64 // entries in byMark, read without the lock
	mu     sync.Mutex
	byMark map[string][]byte
}

func newSplices(id string) *splices {
	return &splices{prefix: "webmcp-cdp-splice:" + id + ":", byMark: make(map[string][]byte)}
}

// stash implements splicer.
func (s *splices) stash(b []byte) string {
	m := s.prefix + strconv.FormatUint(s.seq.Add(1), 10)
	s.mu.Lock()
	s.byMark[m] = b
	s.n.Add(1)
	s.mu.Unlock()
	return m
}

// cut finds a stashed marker in an encoded message and returns the parts
// to write: before the marker, the stashed bytes, after it. ok is false
// when the message has none.
func (s *splices) cut(data []byte) (before, page, after []byte, ok bool) {
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
	if ok {
		delete(s.byMark, m)
		s.n.Add(-1)
	}
	s.mu.Unlock()
	if !ok {
		return nil, nil, nil, false
	}
	return data[:i], page, data[i+1+end+1:], true
}
