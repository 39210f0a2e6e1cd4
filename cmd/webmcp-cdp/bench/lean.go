package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
)

// leanClient is a minimal MCP client over stdio: JSON-RPC lines written and
// matched by id, with no SDK. The go-sdk client spends about as much CPU
// per call as the server it measures (about 0.14–0.3 ms per call with 8
// callers, where a raw CDP caller spends about 0.06 ms), so the rows made
// with this client show what the server itself costs.
type leanClient struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	closed sync.Once

	mu      sync.Mutex // guards the fields below and writes to in
	next    int64
	waiting map[int64]chan []byte
	err     error // why reading ended
}

// startLean starts bin with args (`launch` of a page, or the forwarder)
// and initializes an MCP session on its stdio by hand (protocol
// 2025-11-25, no client capabilities).
func startLean(ctx context.Context, bin string, args, env []string) (*leanClient, error) {
	cmd := exec.Command(bin, args...)
	cmd.Stderr = os.Stderr
	cmd.Env = append(os.Environ(), env...)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s for the minimal client: %w", bin, err)
	}
	c := &leanClient{cmd: cmd, in: in, waiting: make(map[int64]chan []byte)}
	go c.read(out)
	init := `"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"webmcp-cdp-bench-lean","version":"1"}}`
	if _, err := c.rpc(ctx, init); err != nil {
		c.close()
		return nil, fmt.Errorf("initializing the minimal client's session: %w", err)
	}
	if err := c.write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")); err != nil {
		c.close()
		return nil, err
	}
	return c, nil
}

// read hands each answer to the call waiting for its id; notifications
// (no id) are dropped.
func (c *leanClient) read(out io.Reader) {
	r := bufio.NewReaderSize(out, 64<<10)
	var err error
	for {
		var line []byte
		line, err = r.ReadBytes('\n')
		if err != nil {
			break
		}
		id, ok := lineID(line)
		if !ok {
			continue
		}
		c.mu.Lock()
		ch := c.waiting[id]
		delete(c.waiting, id)
		c.mu.Unlock()
		if ch != nil {
			ch <- line
		}
	}
	c.mu.Lock()
	c.err = fmt.Errorf("the server's stdout ended: %w", err)
	for id, ch := range c.waiting {
		close(ch)
		delete(c.waiting, id)
	}
	c.mu.Unlock()
}

// lineID reads the id of a JSON-RPC line that starts {"jsonrpc":"2.0","id":N
// (the go-sdk and the fast path write their answers so, and the bench's
// clients their requests).
func lineID(line []byte) (int64, bool) {
	const prefix = `{"jsonrpc":"2.0","id":`
	if !bytes.HasPrefix(line, []byte(prefix)) {
		return 0, false
	}
	rest := line[len(prefix):]
	end := bytes.IndexByte(rest, ',')
	if end < 0 {
		return 0, false
	}
	id, err := strconv.ParseInt(string(rest[:end]), 10, 64)
	return id, err == nil
}

func (c *leanClient) write(line []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return c.err
	}
	_, err := c.in.Write(line)
	return err
}

// rpc sends one request (method and params as JSON text after the id) and
// returns its answer line.
func (c *leanClient) rpc(ctx context.Context, methodAndParams string) ([]byte, error) {
	ch := make(chan []byte, 1)
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return nil, c.err
	}
	c.next++
	id := c.next
	c.waiting[id] = ch
	line := make([]byte, 0, len(methodAndParams)+48)
	line = append(line, `{"jsonrpc":"2.0","id":`...)
	line = strconv.AppendInt(line, id, 10)
	line = append(line, `,"method":`...)
	line = append(line, methodAndParams...)
	line = append(line, "}\n"...)
	_, err := c.in.Write(line)
	c.mu.Unlock()
	if err != nil {
		return nil, err
	}
	select {
	case ans, ok := <-ch:
		if !ok {
			return nil, errors.New("the server ended before answering")
		}
		return ans, nil
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.waiting, id)
		c.mu.Unlock()
		return nil, ctx.Err()
	}
}

// caller returns a func making one tools/call of the echo tool name, as
// the go-sdk caller does.
func (c *leanClient) caller(name string) func(context.Context) error {
	req := `"tools/call","params":{"name":` + strconv.Quote(name) + `,"arguments":{"text":"x"}}`
	return func(ctx context.Context) error {
		ans, err := c.rpc(ctx, req)
		if err != nil {
			return fmt.Errorf("tools/call %s (minimal client): %w", name, err)
		}
		if !bytes.Contains(ans, []byte(`,"result":`)) || bytes.Contains(ans, []byte(`"isError":true`)) {
			return fmt.Errorf("tools/call %s (minimal client) answered with an error: %s", name, ans)
		}
		return nil
	}
}

// close ends the session (closing stdin makes the server exit) and waits
// for the process, killing it after 5s. Later calls do nothing.
func (c *leanClient) close() {
	c.closed.Do(func() {
		c.in.Close()
		waitOrKill(c.cmd)
	})
}
