// Package relaycmd holds the commands of remote mode's other ends: relay
// (the proxy, and relay token, which issues its tokens) and connect (an MCP
// stdio server for a local agent, through the relay). launch and attach's
// own --relay flags stay with those commands.
package relaycmd

import (
	"fmt"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/webmcp-cdp/webmcp-cdp/cmd/webmcp-cdp/cli"
	"github.com/webmcp-cdp/webmcp-cdp/cmd/webmcp-cdp/serve"
	"github.com/webmcp-cdp/webmcp-cdp/hub/mcpserver"
	"github.com/webmcp-cdp/webmcp-cdp/hub/relay"
	"github.com/webmcp-cdp/webmcp-cdp/hub/relay/proxy"
)

// TokenEnv is read when no token flag is given, so that a token need not
// appear on a command line (where other users of the machine can see it).
const TokenEnv = "WEBMCP_CDP_RELAY_TOKEN"

// NewRelay is the relay command (and its token subcommand): the proxy of
// the MCP Proxy Protocol that launch --relay and connect meet at.
func NewRelay() *cobra.Command {
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
			// Both or neither of --tls-cert and --tls-key (cobra checks).
			if _, err := checkListen(listen, tlsCert, tlsKey, insecure); err != nil {
				return err
			}
			opts.Auth = auth
			opts.Logger = slog.Default()
			srv, err := relay.NewServer(opts)
			if err != nil {
				return err
			}
			return srv.ListenAndServe(ctx, proxy.ListenOptions{Addr: listen, CertFile: tlsCert, KeyFile: tlsKey, Logger: opts.Logger})
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

// NewConnect is the connect command: an MCP stdio server for a local agent,
// serving a remote browser's tools through a relay. version is the
// program's.
func NewConnect(version string) *cobra.Command {
	var opts relay.RemoteOptions
	var dialogs string
	cmd := &cobra.Command{
		Use:   "connect --relay wss://HOST/mcp [--token JWT] [--extension ID|NAME]",
		Short: "Serve a remote browser's WebMCP tools over MCP on stdio, through a relay",
		Long: "connect is an MCP stdio server for a local agent. It connects to a relay's /mcp endpoint,\n" +
			"authenticates with the token, and connects to the browser named by --extension (an id or a name\n" +
			"from the relay), or to the only browser of the token's user. It serves that browser's page tools\n" +
			"(list_changed included) and webmcp_* tools for its tabs, and reconnects when the browser or the\n" +
			"relay comes back. A wrong URL or token fails at once.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if opts.Token == "" {
				opts.Token = os.Getenv(TokenEnv)
			}
			if opts.Token == "" {
				return fmt.Errorf("connect needs a token: pass --token JWT or set $%s", TokenEnv)
			}
			pol, err := mcpserver.ParseDialogPolicy(dialogs)
			if err != nil {
				return err
			}
			opts.Dialogs = pol
			opts.Version = version
			opts.Logger = slog.Default()
			r, err := relay.NewRemote(opts)
			if err != nil {
				return err
			}
			if err := r.Start(ctx); err != nil {
				return err
			}
			// The relay's server has no local hub: no fast path.
			select {
			case err := <-serve.RunStdio(ctx, r.MCP(), nil):
				return err
			case <-ctx.Done():
				slog.Info("interrupted; stopping")
				return nil
			}
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&opts.URL, "relay", "", "the relay's client endpoint, wss://HOST/mcp")
	fs.StringVar(&opts.Token, "token", "", "the token (JWT) for the relay (default $"+TokenEnv+")")
	fs.StringVar(&opts.Extension, "extension", "", "the browser to connect to: an id or a name the relay lists (default: the only one)")
	fs.BoolVar(&opts.Dial.Insecure, "insecure", false, "allow ws:// to a relay that is not on this machine (the token then crosses the network in the clear)")
	cli.RegisterDialogs(fs, &dialogs)
	_ = cmd.MarkFlagRequired("relay")
	return cmd
}
