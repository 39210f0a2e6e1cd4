package core

import (
	"context"
	"errors"
)

// BackendMCPB is an MCP-B page server: a full MCP server running in the
// page (McpServer over @mcp-b/transports' TabServerTransport, or
// IframeChildTransport in a child frame), reached through the page
// script's proxy client.
const BackendMCPB Backend = "mcp-b"

// ErrPageServerGone is the error of a message to a page server that
// stopped, or whose document went away.
var ErrPageServerGone = errors.New("the page server is gone")

// PageServer describes one MCP-B page server as the page script found it.
type PageServer struct {
	// ID is the page script's id of the server within its document.
	ID string
	// Channel is the server's postMessage channel name (mcp-default unless
	// the site chose another).
	Channel string
	// Kind is "tab" for a server in the document's own window, "iframe"
	// for one in a direct child frame.
	Kind string
	// FrameOrigin is the event.origin the browser gave the server's ready
	// message: the document's own origin for "tab", the child frame's for
	// "iframe".
	FrameOrigin string
}

// PageConn is the raw message pipe to one page server: JSON-RPC messages
// as bytes, bounded in size and rate by the browser. It ends when the
// server stops or its document goes away.
type PageConn interface {
	// Server describes the server.
	Server() PageServer
	// Recv returns the next message from the server. It fails with
	// ErrPageServerGone when the pipe ended.
	Recv(ctx context.Context) ([]byte, error)
	// Send hands one message to the server. call says it is a request:
	// the pipe may then wait a moment for the answer, to bring it back in
	// the same round trip (Recv returns it as usual).
	Send(ctx context.Context, msg []byte, call bool) error
	// Done is closed when the pipe ends.
	Done() <-chan struct{}
	// Dropped returns the counts, by reason, of the server's messages the
	// browser dropped since the last call (over the size or rate bounds,
	// malformed, forged by another frame).
	Dropped() map[string]int
	// DropSignal is signalled (capacity 1) when messages were dropped.
	DropSignal() <-chan struct{}
	// Close ends the pipe.
	Close()
}
