package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/webmcp-cdp/webmcp-cdp/cdp"
	"github.com/webmcp-cdp/webmcp-cdp/hub/relay"
)

// tokenEnv is read when no token flag is given, so that a token need not
// appear on a command line (where other users of the machine can see it).
const tokenEnv = "WEBMCP_CDP_RELAY_TOKEN"

func newRelay() *cobra.Command {
	var listen, secretFile, tlsCert, tlsKey string
	var insecure bool
	opts := relay.ServerOptions{}
	cmd := &cobra.Command{
		Use:   "relay --listen ADDR --jwt-secret-file FILE [--tls-cert CERT --tls-key KEY]",
		Short: "Run the remote-mode relay: browsers (launch/attach --relay) connect to /extension, MCP clients (connect) to /mcp",
		Long: "relay is the proxy of the MCP Proxy Protocol. Browsers started with `launch --relay` or `attach --relay`\n" +
			"connect to /extension; `connect` (an MCP stdio server for a local agent) connects to /mcp. Both\n" +
			"authenticate with HS256 JWTs signed with the secret in --jwt-secret-file (sub is the user id, exp is\n" +
			"required); a client reaches only browsers of its own user. `relay token` issues tokens.\n\n" +
			"Without --tls-cert/--tls-key the relay speaks ws:// and only listens on a loopback address, unless\n" +
			"--insecure is given (tokens then cross the network in the clear).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			auth, err := loadSecret(secretFile)
			if err != nil {
				return err
			}
			useTLS, err := checkListen(listen, tlsCert, tlsKey, insecure)
			if err != nil {
				return err
			}
			opts.Auth = auth
			opts.Logger = slog.Default()
			srv, err := relay.NewServer(opts)
			if err != nil {
				return err
			}
			defer srv.Close()
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return fmt.Errorf("--listen %s: %w", listen, err)
			}
			scheme := "ws"
			if useTLS {
				scheme = "wss"
			}
			addr := ln.Addr().String()
			slog.Info("relay listening", "addr", addr, "browsers", scheme+"://"+addr+"/extension", "clients", scheme+"://"+addr+"/mcp")
			httpSrv := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(slog.Default().Handler(), slog.LevelDebug)}
			done := make(chan error, 1)
			go func() {
				if useTLS {
					httpSrv.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12}
					done <- httpSrv.ServeTLS(ln, tlsCert, tlsKey)
					return
				}
				done <- httpSrv.Serve(ln)
			}()
			select {
			case err := <-done:
				return fmt.Errorf("serving the relay: %w", err)
			case <-ctx.Done():
			}
			slog.Info("relay stopping")
			srv.Close()
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = httpSrv.Shutdown(sctx)
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&listen, "listen", "127.0.0.1:8765", "address to listen on (host:port; port 0 picks a free one, and the log says which)")
	fs.StringVar(&secretFile, "jwt-secret-file", "", "file holding the HS256 secret that signs tokens (at least 32 bytes)")
	fs.StringVar(&tlsCert, "tls-cert", "", "TLS certificate (PEM) to serve wss://")
	fs.StringVar(&tlsKey, "tls-key", "", "TLS private key (PEM) for --tls-cert")
	fs.BoolVar(&insecure, "insecure", false, "allow ws:// (no TLS) on an address other than loopback")
	fs.Int64Var(&opts.MaxClientMessageBytes, "max-client-message-bytes", 1<<20, "largest message an MCP client may send")
	fs.Int64Var(&opts.MaxBrowserMessageBytes, "max-browser-message-bytes", 32<<20, "largest message a browser may send (screenshots are big)")
	fs.Float64Var(&opts.ClientRate, "client-rate", 100, "messages a second one MCP client connection may send")
	fs.IntVar(&opts.ClientBurst, "client-burst", 200, "burst of messages allowed above --client-rate")
	fs.IntVar(&opts.MaxInflight, "max-inflight", 64, "forwarded requests one client may have waiting for its browser")
	fs.DurationVar(&opts.RequestTimeout, "request-timeout", 2*time.Minute, "longest a forwarded request waits for the browser's answer")
	fs.DurationVar(&opts.AuthTimeout, "handshake-timeout", 10*time.Second, "how long a new connection has to authenticate before it is closed")
	fs.Int64Var(&opts.MaxHandshakeBytes, "max-handshake-bytes", 8<<10, "largest message a connection may send before it has authenticated")
	fs.IntVar(&opts.MaxUnauthenticated, "max-unauthenticated", 512, "connections that have not authenticated yet the relay takes at once; more are refused (HTTP 503)")
	fs.IntVar(&opts.MaxUnauthenticatedPerIP, "max-unauthenticated-per-ip", 32, "connections from one IP address that have not authenticated yet; more are refused (HTTP 429)")
	_ = cmd.MarkFlagRequired("jwt-secret-file")
	cmd.MarkFlagsRequiredTogether("tls-cert", "tls-key")
	cmd.AddCommand(newRelayToken())
	return cmd
}

// checkListen decides between ws:// and wss:// and refuses plain ws:// off
// loopback unless insecure.
func checkListen(listen, cert, key string, insecure bool) (useTLS bool, err error) {
	if cert != "" && key != "" {
		return true, nil
	}
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return false, fmt.Errorf("--listen %q: want host:port: %w", listen, err)
	}
	if !relay.IsLoopback(host) && !insecure {
		return false, fmt.Errorf("--listen %s is not a loopback address: serve TLS with --tls-cert and --tls-key, or pass --insecure to allow ws:// (tokens then cross the network in the clear)", listen)
	}
	if !relay.IsLoopback(host) {
		slog.Warn("serving ws:// without TLS on a non-loopback address (--insecure): tokens cross the network in the clear")
	}
	return false, nil
}

func loadSecret(path string) (*relay.HS256, error) {
	secret, err := relay.ReadSecretFile(path)
	if err != nil {
		return nil, fmt.Errorf("--jwt-secret-file: %w", err)
	}
	auth, err := relay.NewHS256(secret)
	if err != nil {
		return nil, fmt.Errorf("--jwt-secret-file %s: %w", path, err)
	}
	return auth, nil
}

func newRelayToken() *cobra.Command {
	var secretFile, sub string
	var ttl time.Duration
	cmd := &cobra.Command{
		Use:   "token --jwt-secret-file FILE --sub USER [--ttl D]",
		Short: "Print a token (HS256 JWT) for a user, for browsers (--relay-token) and clients (connect --token)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			auth, err := loadSecret(secretFile)
			if err != nil {
				return err
			}
			tok, err := auth.Issue(sub, ttl)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), tok)
			return err
		},
	}
	cmd.Flags().StringVar(&secretFile, "jwt-secret-file", "", "file holding the relay's HS256 secret")
	cmd.Flags().StringVar(&sub, "sub", "", "the user id (the token's sub claim); a client reaches only browsers of the same user")
	cmd.Flags().DurationVar(&ttl, "ttl", 30*24*time.Hour, "how long the token is valid")
	_ = cmd.MarkFlagRequired("jwt-secret-file")
	_ = cmd.MarkFlagRequired("sub")
	return cmd
}

// relayFlags are the flags that make launch and attach the browser side of
// a relay instead of an MCP stdio server.
type relayFlags struct {
	url, token, name string
	allowRawCDP      bool
	insecure         bool
}

func (f *relayFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.url, "relay", "", "serve this browser through a relay instead of on stdio: the relay's browser endpoint, wss://HOST/extension")
	fs.StringVar(&f.token, "relay-token", "", "the token (JWT) for --relay (default $"+tokenEnv+")")
	fs.StringVar(&f.name, "name", "", "the name clients see for this browser on the relay (default: host name and browser version)")
	fs.BoolVar(&f.allowRawCDP, "allow-raw-cdp", false, "let relay clients send raw CDP commands to tabs (forwardCDPCommand): full control of the browser")
	fs.BoolVar(&f.insecure, "relay-insecure", false, "allow ws:// to a relay that is not on this machine (the token then crosses the network in the clear)")
}

// check validates the flags before the browser starts.
func (f *relayFlags) check() error {
	if f.url == "" {
		if f.token != "" || f.name != "" || f.allowRawCDP || f.insecure {
			return errors.New("--relay-token, --name, --allow-raw-cdp and --relay-insecure need --relay")
		}
		return nil
	}
	if f.token == "" {
		f.token = os.Getenv(tokenEnv)
	}
	if f.token == "" {
		return fmt.Errorf("--relay needs a token: pass --relay-token JWT or set $%s", tokenEnv)
	}
	if _, err := relay.CheckURL(f.url, f.insecure); err != nil {
		return fmt.Errorf("--relay: %w", err)
	}
	return nil
}

func (f *relayFlags) enabled() bool { return f.url != "" }

// relayLeaveGrace bounds the wait for the relay link to close when the
// browser side stops.
const relayLeaveGrace = 3 * time.Second

// serveRelay serves the browser through the relay until the browser goes
// away (exit status 2) or ctx ends. stdio is not used.
func (s *session) serveRelay(ctx context.Context, f *relayFlags, exited <-chan struct{}, why func() string) error {
	name := f.name
	if name == "" {
		name = defaultBrowserName(ctx, s.conn)
	}
	bs, err := relay.NewBrowserSide(relay.BrowserSideOptions{
		URL:         f.url,
		Token:       f.token,
		Name:        name,
		Hub:         s.hub,
		Actions:     s.browser,
		AllowRawCDP: f.allowRawCDP,
		CallTimeout: s.server.CallTimeout(),
		Dial:        relay.DialOptions{Insecure: f.insecure},
		Logger:      slog.Default(),
	})
	if err != nil {
		return err
	}
	if f.allowRawCDP {
		slog.Warn("--allow-raw-cdp: relay clients of this user may send any CDP command to this browser's tabs")
	}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- bs.Run(rctx) }()
	// stop ends the relay link and waits for it to close, up to
	// relayLeaveGrace: a grace period for saying goodbye to the relay, not
	// a poll.
	stop := func() {
		cancel()
		grace := time.NewTimer(relayLeaveGrace)
		defer grace.Stop()
		select {
		case <-done:
		case <-grace.C:
		}
	}
	select {
	case err := <-done:
		return err
	case <-s.conn.Done():
		stop()
		return s.lost(exited, why)
	case err := <-s.browser.Fatal():
		stop()
		return &exitError{code: 2, err: err}
	case <-ctx.Done():
		slog.Info("interrupted; leaving the relay")
		stop()
		return nil
	}
}

// defaultBrowserName is "HOST · PRODUCT", e.g. "build-7 · HeadlessChrome/156.0.8078.79".
func defaultBrowserName(ctx context.Context, conn *cdp.Conn) string {
	host, _ := os.Hostname()
	if host == "" {
		host = "webmcp-cdp"
	}
	if v, err := cdp.Version(ctx, conn); err == nil && v.Product != "" {
		return host + " · " + v.Product
	}
	return host
}
