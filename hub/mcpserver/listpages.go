package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file answers tools/list for a ToolSet (listing.go): the pages of
// one snapshot, our own tools first, spliced from bytes rendered once.

// list answers tools/list: the server's own tools, then the set's, from
// one snapshot, paginated. A cursor is "<version>.<page>".
func (ts *ToolSet) list(ctx context.Context, next mcp.MethodHandler, r *mcp.ListToolsRequest) (mcp.Result, error) {
	cursor := ""
	if r.Params != nil {
		cursor = r.Params.Cursor
	}
	if cursor == "" && ts.opts.FirstList != nil {
		select {
		case <-ts.opts.FirstList:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	s, page := ts.cur.Load(), 0
	if cursor != "" {
		var err error
		if s, page, err = ts.locate(cursor); err != nil {
			return nil, err
		}
	}
	view := s.view(declaresApps(r.ClientCapabilities()))
	if page >= view.pages {
		return nil, badCursor()
	}
	out := &listResult{ListToolsResult: &mcp.ListToolsResult{}}
	// The SDK lists the server's own tools (and fills what it fills in a
	// result, such as the cache hints) on the first page.
	ownRes, err := next(ctx, "tools/list", &mcp.ListToolsRequest{Session: r.Session, Params: &mcp.ListToolsParams{Meta: paramsMeta(r)}, Extra: r.Extra})
	if err != nil {
		return nil, err
	}
	if own, ok := ownRes.(*mcp.ListToolsResult); ok {
		out.ListToolsResult = own
		if page == 0 {
			out.own = ts.renderOwn(own.Tools)
		}
		own.Tools = []*mcp.Tool{}
		own.NextCursor = ""
	}
	out.tools = s.page(view, page)
	ts.splice(r.Session, out)
	if page+1 < view.pages {
		out.NextCursor = strconv.FormatUint(s.version, 10) + "." + strconv.Itoa(page+1)
	}
	return out, nil
}

func badCursor() error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid or expired cursor: list the tools again from the start"}
}

func paramsMeta(r *mcp.ListToolsRequest) mcp.Meta {
	if r.Params == nil {
		return nil
	}
	return r.Params.Meta
}

// locate finds the snapshot and page a cursor names.
func (ts *ToolSet) locate(cursor string) (*snapshot, int, error) {
	bad := badCursor()
	v, p, ok := strings.Cut(cursor, ".")
	version, err1 := strconv.ParseUint(v, 10, 64)
	page, err2 := strconv.Atoi(p)
	if !ok || err1 != nil || err2 != nil || page < 0 {
		return nil, 0, bad
	}
	ts.keepMu.Lock()
	defer ts.keepMu.Unlock()
	for _, s := range ts.recent {
		if s.version == version && page < max(s.plain.pages, s.apps.pages) {
			return s, page, nil
		}
	}
	return nil, 0, bad
}

// renderOwn renders the server's own tools (without the dispatch tool),
// once for as long as they stay the same.
func (ts *ToolSet) renderOwn(tools []*mcp.Tool) []byte {
	ts.ownMu.Lock()
	defer ts.ownMu.Unlock()
	if slices.Equal(tools, ts.ownKey) && ts.ownJSON != nil {
		return ts.ownJSON
	}
	var b []byte
	for _, t := range tools {
		if t.Name == dispatchName {
			continue
		}
		j, err := RenderTool(t)
		if err != nil {
			ts.log.Error("not listing a tool", "name", t.Name, "err", err)
			continue
		}
		if len(b) > 0 {
			b = append(b, ',')
		}
		b = append(b, j...)
	}
	ts.ownKey, ts.ownJSON = slices.Clone(tools), b
	return b
}

// toolsPage is one page of a snapshot's tools. It is written as the
// tools' JSON objects separated by commas, without brackets, straight from
// each entry's bytes.
type toolsPage []ToolEntry

// size returns the number of bytes the page writes.
func (p toolsPage) size() int {
	n := max(len(p)-1, 0)
	for _, e := range p {
		n += len(e.JSON)
	}
	return n
}

// appendTo appends the page to b.
func (p toolsPage) appendTo(b []byte) []byte {
	for i, e := range p {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, e.JSON...)
	}
	return b
}

// writeChunk is the size of the buffer that writeParts fills before each
// write.
const writeChunk = 64 << 10

// pageWriter writes tools/list pages from the tools' own bytes: in writes
// of writeChunk bytes (besides a part larger on its own) rather than one
// per tool, and without a buffer of the whole page. Its buffers are reused.
type pageWriter struct {
	bufs sync.Pool // of *bufio.Writer, writeChunk bytes each
}

// write writes before, the page and after to w.
func (pw *pageWriter) write(w io.Writer, before []byte, page toolsPage, after []byte) error {
	buf, _ := pw.bufs.Get().(*bufio.Writer)
	if buf == nil {
		buf = bufio.NewWriterSize(nil, writeChunk)
	}
	buf.Reset(w)
	buf.Write(before)
	for i, e := range page {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(e.JSON)
	}
	buf.Write(after)
	err := buf.Flush()
	buf.Reset(nil)
	pw.bufs.Put(buf)
	return err
}

// listResult is a tools/list result whose tools are already JSON. It is a
// *mcp.ListToolsResult for the SDK (which may set its _meta and result
// type) and marshals the pre-rendered tools in place of its Tools.
type listResult struct {
	*mcp.ListToolsResult
	own   []byte    // the server's own tools, comma-separated
	tools toolsPage // the set's tools of this page
	// marker, when set, stands in for tools: the transport writes the
	// tools in its place (fast_list.go).
	marker string
}

// MarshalJSON writes the result's envelope, then the tools as rendered.
func (r *listResult) MarshalJSON() ([]byte, error) {
	r.Tools = []*mcp.Tool{}
	head, err := json.Marshal(r.ListToolsResult)
	if err != nil {
		return nil, err
	}
	const tail = `"tools":[]}`
	if !bytes.HasSuffix(head, []byte(tail)) {
		return nil, fmt.Errorf("unexpected tools/list envelope %.100q", head)
	}
	var marker []byte
	if r.marker != "" {
		marker = []byte(strconv.Quote(r.marker))
	}
	b := make([]byte, 0, len(head)+len(r.own)+len(marker)+r.tools.size()+2)
	b = append(b, head[:len(head)-2]...)
	b = append(b, r.own...)
	if len(r.own) > 0 && (len(marker) > 0 || len(r.tools) > 0) {
		b = append(b, ',')
	}
	b = append(b, marker...)
	b = r.tools.appendTo(b)
	return append(b, "]}"...), nil
}
