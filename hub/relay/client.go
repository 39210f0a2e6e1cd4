package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"

	"github.com/coder/websocket"
	"github.com/webmcp-cdp/webmcp-cdp/hub/relay/proxy"
)

// ClientOptions configures Dial.
type ClientOptions struct {
	// Dial configures the connection.
	Dial DialOptions
	// OnNotification receives the proxy's notifications (status,
	// disconnected). It runs on the reader goroutine and must not block.
	OnNotification func(method string, params json.RawMessage)
	// Logger receives the log (default slog.Default()).
	Logger *slog.Logger
}

// Client is the MCP-client end of the protocol: it connects to a relay's
// /mcp endpoint, makes requests with numeric ids, and matches the answers.
// Its methods are safe for concurrent use.
type Client struct {
	ws   *websocket.Conn
	opts ClientOptions

	mu      sync.Mutex
	next    int64
	pending map[string]chan *Message
	done    chan struct{}
	err     error
}

// ErrClientClosed is the error of calls on a client whose connection ended.
var ErrClientClosed = errors.New("the connection to the relay is closed")

// Dial connects to a relay's MCP endpoint (ws(s)://HOST/mcp). It does not
// authenticate: call Handshake next.
func Dial(ctx context.Context, url string, opts ClientOptions) (*Client, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	ws, err := proxy.DialWebSocket(ctx, url, opts.Dial)
	if err != nil {
		return nil, err
	}
	c := &Client{ws: ws, opts: opts, pending: make(map[string]chan *Message), done: make(chan struct{})}
	go c.read()
	return c, nil
}

// Done is closed when the connection ends.
func (c *Client) Done() <-chan struct{} { return c.done }

// Err says why the connection ended (nil while it is open).
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Close closes the connection.
func (c *Client) Close() error {
	err := c.ws.Close(websocket.StatusNormalClosure, "")
	<-c.done
	if err != nil && !errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("closing the relay connection: %w", err)
	}
	return nil
}

func (c *Client) read() {
	var err error
	defer func() {
		c.mu.Lock()
		if err == nil {
			err = ErrClientClosed
		}
		c.err = fmt.Errorf("%w: %w", ErrClientClosed, err)
		c.mu.Unlock()
		close(c.done)
	}()
	for {
		var data []byte
		_, data, err = c.ws.Read(context.Background())
		if err != nil {
			return
		}
		msg, perr := ParseMessage(data)
		if perr != nil {
			c.opts.Logger.Debug("relay client: an invalid message from the relay", "err", perr.Message)
			continue
		}
		switch msg.Kind() {
		case KindResponse:
			c.mu.Lock()
			ch := c.pending[msg.IDKey()]
			delete(c.pending, msg.IDKey())
			c.mu.Unlock()
			if ch != nil {
				ch <- msg
			}
		case KindNotification:
			if c.opts.OnNotification != nil {
				c.opts.OnNotification(msg.Method, msg.Params)
			}
		case KindRequest:
			// A client never answers: say so, so the asker does not wait.
			_ = c.write(context.Background(), proxy.EncodeError(msg.ID, proxy.Errorf(CodeMethodNotFound, "Method not found: this MCP client serves no methods")))
		}
	}
}

func (c *Client) write(ctx context.Context, data []byte) error {
	ctx, cancel := context.WithTimeout(ctx, proxy.WriteTimeout)
	defer cancel()
	if err := c.ws.Write(ctx, websocket.MessageText, data); err != nil {
		return fmt.Errorf("writing to the relay: %w", err)
	}
	return nil
}

// Call sends a request and decodes the result into result (which may be
// nil). An error answer is returned as an *Error.
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return err
	}
	c.next++
	key := strconv.FormatInt(c.next, 10)
	ch := make(chan *Message, 1)
	c.pending[key] = ch
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		delete(c.pending, key)
		c.mu.Unlock()
	}
	if err := c.write(ctx, proxy.EncodeRequest(json.RawMessage(key), method, params)); err != nil {
		forget()
		return err
	}
	answered, err := c.await(ctx, method, ch, result)
	if !answered {
		forget()
	}
	return err
}

// await waits for the answer on ch and decodes it into result; answered
// is false when ctx ended or the connection closed first.
func (c *Client) await(ctx context.Context, method string, ch <-chan *Message, result any) (answered bool, err error) {
	select {
	case msg := <-ch:
		return true, c.decode(method, msg, result)
	case <-ctx.Done():
		return false, ctx.Err()
	case <-c.done:
		// The reader hands over an answer before it ends: a relay that
		// answers and then closes (as one refusing a token does) must
		// give that answer, not "closed". select picks at random when
		// both are ready.
		select {
		case msg := <-ch:
			return true, c.decode(method, msg, result)
		default:
		}
		return false, c.Err()
	}
}

// decode returns an answer's error, or decodes its result into result
// (which may be nil).
func (c *Client) decode(method string, msg *Message, result any) error {
	if msg.Error != nil {
		return msg.Error
	}
	if result == nil {
		return nil
	}
	if err := json.Unmarshal(msg.Result, result); err != nil {
		return fmt.Errorf("decoding the result of %s: %w", method, err)
	}
	return nil
}

// Handshake authenticates with an access token.
func (c *Client) Handshake(ctx context.Context, token string) (HandshakeResult, error) {
	var res HandshakeResult
	err := c.Call(ctx, MethodHandshake, proxy.HandshakeParams{AccessToken: token}, &res)
	return res, err
}

// ListExtensions lists the browsers of this client's user.
func (c *Client) ListExtensions(ctx context.Context) ([]ExtensionInfo, error) {
	var res ListExtensionsResult
	err := c.Call(ctx, MethodListExtensions, struct{}{}, &res)
	return res.Extensions, err
}

// Connect connects to a browser; forwarded methods then go to it.
func (c *Client) Connect(ctx context.Context, extensionID string) (ConnectResult, error) {
	var res ConnectResult
	err := c.Call(ctx, MethodConnect, proxy.ConnectParams{ExtensionID: extensionID}, &res)
	return res, err
}

// Disconnect ends the connection to the browser; the client stays
// authenticated.
func (c *Client) Disconnect(ctx context.Context) error {
	return c.Call(ctx, MethodDisconnect, struct{}{}, nil)
}
