package cdp

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto"
	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/chromedp"
	"github.com/coder/websocket"
)

const (
	// attachTimeout bounds /json/version.
	attachTimeout = 10 * time.Second
	// handshakeTimeout bounds the WebSocket handshake. A browser service
	// (browserless, a Grid node) starts a browser before it answers the
	// upgrade, which takes seconds on a busy host (10 s was seen to run out
	// in CI); Playwright's connectOverCDP waits 30 s too.
	handshakeTimeout = 30 * time.Second
	// maxMessage is the largest message read from the browser (chromedp's
	// limit: a screenshot or a large DOM is tens of MB).
	maxMessage = 256 << 20
)

// Attach connects to a browser started with --remote-debugging-port, or a
// browser service: through ep.BrowserURL's /json/version, or straight to
// ep.WSEndpoint. Logs and errors show the endpoint redacted (RedactURL).
func Attach(ctx context.Context, ep Endpoint, logger *slog.Logger) (*Conn, error) {
	if logger == nil {
		logger = slog.Default()
	}
	client := endpointClient(ep)
	var ws *url.URL
	switch {
	case ep.WSEndpoint != "":
		u, err := url.Parse(ep.WSEndpoint)
		if err != nil || (u.Scheme != "ws" && u.Scheme != "wss") || u.Host == "" {
			return nil, fmt.Errorf("--ws-endpoint %s is not a ws:// or wss:// URL such as ws://127.0.0.1:9222/devtools/browser/ID or wss://host/?token=TOKEN", RedactURL(ep.WSEndpoint))
		}
		ws = u
	case ep.BrowserURL != "":
		var err error
		if ws, err = resolveWS(ctx, client, ep); err != nil {
			return nil, err
		}
	default:
		return nil, errors.New("attach needs --browser-url or --ws-endpoint")
	}
	dctx, cancel := context.WithTimeout(ctx, handshakeTimeout)
	defer cancel()
	c, resp, err := websocket.Dial(dctx, ws.String(), &websocket.DialOptions{HTTPClient: client, HTTPHeader: ep.Header})
	if resp != nil && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) {
		return nil, refusedError("the WebSocket endpoint "+redactURL(ws), resp.StatusCode)
	}
	if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		return nil, fmt.Errorf("connecting to %s: no answer to the WebSocket handshake within %s (a browser service starts a browser first: check that it is up and not queueing connections): %w", redactURL(ws), handshakeTimeout, plainErr(err))
	}
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", redactURL(ws), plainErr(err))
	}
	c.SetReadLimit(maxMessage)
	logger.Info("attached to the browser", "endpoint", redactURL(ws), "headers", len(ep.Header))
	return NewConn(&wsTransport{c: c}, logger), nil
}

// endpointClient is the HTTP client of /json/version and the handshake:
// the environment's proxy, ep's TLS, HTTP/1.1 only (a WebSocket upgrade is
// an HTTP/1.1 request), and no redirects (a DevTools endpoint does not
// redirect; following one could send the headers elsewhere).
func endpointClient(ep Endpoint) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.ForceAttemptHTTP2 = false
	tr.TLSClientConfig = ep.TLS.Clone()
	if tr.TLSClientConfig == nil {
		tr.TLSClientConfig = new(tls.Config)
	}
	tr.TLSClientConfig.NextProtos = []string{"http/1.1"}
	return &http.Client{
		Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// resolveWS reads the browser's WebSocket URL from /json/version, and makes
// it reachable the way ep.BrowserURL was (wsFromVersion).
func resolveWS(ctx context.Context, client *http.Client, ep Endpoint) (*url.URL, error) {
	given, err := url.Parse(ep.BrowserURL)
	if err != nil || (given.Scheme != "http" && given.Scheme != "https") || given.Host == "" {
		return nil, fmt.Errorf("--browser-url %s is not an http:// URL such as http://127.0.0.1:9222 (or https://host/?token=TOKEN)", RedactURL(ep.BrowserURL))
	}
	u := *given
	u.Path = strings.TrimSuffix(u.Path, "/") + "/json/version"
	u.RawPath = ""
	rctx, cancel := context.WithTimeout(ctx, attachTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("asking %s for the browser's WebSocket URL: %w", redactURL(&u), plainErr(err))
	}
	for k, vs := range ep.Header {
		req.Header[k] = vs
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("asking %s for the browser's WebSocket URL (is Chrome running with --remote-debugging-port?): %w", redactURL(&u), plainErr(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		return nil, refusedError("the endpoint "+redactURL(&u), resp.StatusCode)
	}
	var v struct {
		WS string `json:"webSocketDebuggerUrl"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&v); err != nil || v.WS == "" {
		return nil, fmt.Errorf("%s did not give a webSocketDebuggerUrl (status %s); for a browser service that serves no /json/version, pass its WebSocket URL with --ws-endpoint", redactURL(&u), resp.Status)
	}
	return wsFromVersion(given, v.WS)
}

// wsTransport is a chromedp.Transport over github.com/coder/websocket.
// chromedp's own WebSocket dialer takes headers but no TLS configuration,
// which --ca-file needs (docs/decisions/2026-11-26-cdp-endpoints.md).
type wsTransport struct {
	c *websocket.Conn

	// Only the reader goroutine reads and decodes. in is reused: decoding
	// copies what a message keeps (params and results are copied into
	// jsontext.Values), so no message holds on to it.
	dec jsonv2.Decoder
	rd  bytes.Reader
	in  bytes.Buffer

	encMu sync.Mutex
	enc   jsonv2.Encoder
	buf   bytes.Buffer
}

var _ chromedp.Transport = (*wsTransport)(nil)

// Read reads the next message. The context is not used: cancelling a read
// would close the connection.
func (t *wsTransport) Read(_ context.Context, msg *cdproto.Message) error {
	typ, r, err := t.c.Reader(context.Background())
	if err != nil {
		return err
	}
	if typ != websocket.MessageText {
		return errors.New("the browser sent a binary WebSocket message; CDP messages are text")
	}
	t.in.Reset()
	if _, err := t.in.ReadFrom(r); err != nil {
		return err
	}
	t.rd.Reset(t.in.Bytes())
	t.dec.Reset(&t.rd, chromedp.DefaultUnmarshalOptions)
	return jsonv2.UnmarshalDecode(&t.dec, msg, chromedp.DefaultUnmarshalOptions)
}

// Write sends msg as one text message (Chrome takes no fragments).
func (t *wsTransport) Write(_ context.Context, msg *cdproto.Message) error {
	t.encMu.Lock()
	defer t.encMu.Unlock()
	t.buf.Reset()
	t.enc.Reset(&t.buf, chromedp.DefaultMarshalOptions)
	if err := jsonv2.MarshalEncode(&t.enc, msg, chromedp.DefaultMarshalOptions); err != nil {
		return err
	}
	return t.c.Write(context.Background(), websocket.MessageText, t.buf.Bytes())
}

// Close closes the connection with a close handshake; a connection the
// browser closed already is not an error.
func (t *wsTransport) Close() error {
	err := t.c.Close(websocket.StatusNormalClosure, "")
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}
