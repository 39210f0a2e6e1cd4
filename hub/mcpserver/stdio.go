package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMaxLine is the longest stdio message StdioTransport reads (16 MiB).
const DefaultMaxLine = 16 << 20

// StdioTransport is MCP's stdio transport (one JSON-RPC message per line)
// that a bad line cannot end: a line that is not JSON gets a -32700 reply, a
// line that is JSON but not a JSON-RPC message (or a batch, which MCP no
// longer allows) gets -32600, a line over MaxLine is skipped with a -32600
// reply, and the session goes on with the next line. Only the end of input
// or a failed write ends it. The go-sdk's own stdio transport ends the
// session on any of these (issue 15).
type StdioTransport struct {
	// In and Out are the streams (os.Stdin and os.Stdout).
	In  io.Reader
	Out io.Writer
	// MaxLine bounds one message, in bytes (default DefaultMaxLine).
	MaxLine int
	// Logger receives one line per refused message (default slog.Default()).
	Logger *slog.Logger
	// Server, when set, is the Server this transport is run for: the
	// page-tool calls that cannot ask the client anything are then
	// answered without the SDK's JSON-RPC machinery (fast.go), with the
	// bytes the SDK would write.
	Server *Server
}

// Connect implements mcp.Transport.
func (t *StdioTransport) Connect(context.Context) (mcp.Connection, error) {
	max := t.MaxLine
	if max <= 0 {
		max = DefaultMaxLine
	}
	logger := t.Logger
	if logger == nil {
		logger = slog.Default()
	}
	c := &stdioConn{
		out:      t.Out,
		in:       t.In,
		logger:   logger,
		incoming: make(chan readResult),
		closed:   make(chan struct{}),
		turn:     make(chan struct{}),
	}
	if t.Server != nil {
		// A session id of its own lets the fast path find the SDK's
		// session of this connection (the SDK shows it in its log only).
		id := make([]byte, 8)
		rand.Read(id)
		c.id = "stdio-" + hex.EncodeToString(id)
		c.fast = newFastCalls(t.Server, c, c.id)
		c.splices = newSplices(c.id)
		c.stopSplicing = t.Server.tools.addSplicer(c.id, c.splices)
	}
	go c.readLoop(bufio.NewReaderSize(t.In, 64<<10), max)
	return c, nil
}

type readResult struct {
	msg jsonrpc.Message
	err error
}

type stdioConn struct {
	in           io.Reader
	out          io.Writer
	logger       *slog.Logger
	incoming     chan readResult
	closed       chan struct{}
	once         sync.Once
	id           string     // the session id ("" without a fast path)
	fast         *fastCalls // nil without a fast path
	splices      *splices   // nil without a fast path
	stopSplicing func()

	writeMu sync.Mutex

	// Readers that ran a fast call wait here to read on (readers.go), so
	// the next call runs on a goroutine whose stack has already grown.
	spareMu sync.Mutex
	spares  int
	turn    chan struct{}
}

// readLoop reads lines until the input ends, answering the bad ones itself.
func (c *stdioConn) readLoop(r *bufio.Reader, max int) {
	for {
		line, over, err := readLine(r, max)
		if over {
			c.refuse(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("the message is over %d bytes; it was skipped (send smaller arguments)", max))
		} else if line = bytes.TrimSpace(line); len(line) > 0 {
			if run := c.fast.try(line); run != nil {
				// The fast path takes the call. This goroutine runs it,
				// and another reads on: the call starts at once, with
				// no hand-off to another goroutine (or thread) on its way.
				c.passTurn(r, max)
				run()
				if !c.waitTurn() {
					return
				}
				continue
			} else if msg, id, code, why := decodeLine(line); msg != nil {
				if c.fast != nil {
					c.fast.noteRequest(msg)
				}
				select {
				case c.incoming <- readResult{msg: msg}:
				case <-c.closed:
					return
				}
			} else {
				c.refuse(id, code, why)
			}
		}
		if err != nil {
			select {
			case c.incoming <- readResult{err: err}:
			case <-c.closed:
			}
			return
		}
	}
}

// readLine reads one line of at most max bytes. over reports a longer line,
// which is read to its end and dropped, so it never sits in memory whole.
func readLine(r *bufio.Reader, max int) (line []byte, over bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if !over {
			if len(line)+len(chunk) > max+1 { // +1: the newline
				over, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return line, over, err
	}
}

// decodeLine reads one message. When the line is not one, it returns the
// reply's id (when the line had a usable one), code and message.
func decodeLine(line []byte) (msg jsonrpc.Message, id any, code int64, why string) {
	// json.Valid bounds nesting depth, so a deeply nested line is refused
	// here rather than by a decoder that might not.
	if !json.Valid(line) {
		return nil, nil, jsonrpc.CodeParseError, "Parse error: the line is not valid JSON (each line must be one JSON-RPC message)"
	}
	if line[0] == '[' {
		return nil, nil, jsonrpc.CodeInvalidRequest, "Invalid Request: JSON-RPC batches are not supported; send one message per line"
	}
	if line[0] != '{' {
		return nil, nil, jsonrpc.CodeInvalidRequest, "Invalid Request: a message must be a JSON object"
	}
	m, err := jsonrpc.DecodeMessage(line)
	if err == nil {
		return m, nil, 0, ""
	}
	var head struct {
		ID json.RawMessage `json:"id"`
	}
	json.Unmarshal(line, &head)
	var v any
	if json.Unmarshal(head.ID, &v) == nil {
		switch v.(type) {
		case string, float64:
			id = v
		}
	}
	return nil, id, jsonrpc.CodeInvalidRequest, "Invalid Request: " + err.Error()
}

// refuse writes an error reply for a message that could not be read.
func (c *stdioConn) refuse(id any, code int64, why string) {
	c.logger.Warn("refused a message from the MCP client", "code", code, "reason", why)
	reply, err := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      any    `json:"id"`
		Error   struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}{code, why}})
	if err != nil {
		return
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	c.out.Write(append(reply, '\n'))
}

func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.closed:
		return nil, io.EOF
	case r := <-c.incoming:
		return r.msg, r.err
	}
}

func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("encoding a message for the MCP client: %w", err)
	}
	if c.fast != nil {
		c.fast.sawAnswer(msg)
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if c.splices != nil {
		if before, page, after, ok := c.splices.cut(data); ok {
			// A tools/list page, written from the tools' own bytes.
			if err := c.splices.pages.write(c.out, before, page, append(after, '\n')); err != nil {
				return fmt.Errorf("writing to the MCP client (stdout): %w", err)
			}
			return nil
		}
	}
	if _, err := c.out.Write(append(data, '\n')); err != nil {
		return fmt.Errorf("writing to the MCP client (stdout): %w", err)
	}
	return nil
}

// writeLine writes one line (ending in a newline) that the fast path
// made. A failed write is the SDK's to find: its next write fails too.
func (c *stdioConn) writeLine(line []byte) {
	select {
	case <-c.closed:
		return
	default:
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	c.out.Write(line)
}

func (c *stdioConn) Close() error {
	c.once.Do(func() {
		close(c.closed)
		if c.fast != nil {
			c.fast.close()
			c.stopSplicing()
		}
		if cl, ok := c.in.(io.Closer); ok {
			cl.Close()
		}
	})
	return nil
}

func (c *stdioConn) SessionID() string { return c.id }
