package main

import (
	"fmt"
	"log/slog"
	"os"

	"github.com/spf13/cobra"

	"github.com/webmcp-cdp/webmcp-cdp/hub/mcpserver"
	"github.com/webmcp-cdp/webmcp-cdp/hub/relay"
)

func newConnect() *cobra.Command {
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
				opts.Token = os.Getenv(tokenEnv)
			}
			if opts.Token == "" {
				return fmt.Errorf("connect needs a token: pass --token JWT or set $%s", tokenEnv)
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
			case err := <-runStdio(ctx, r.MCP(), nil):
				return err
			case <-ctx.Done():
				slog.Info("interrupted; stopping")
				return nil
			}
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&opts.URL, "relay", "", "the relay's client endpoint, wss://HOST/mcp")
	fs.StringVar(&opts.Token, "token", "", "the token (JWT) for the relay (default $"+tokenEnv+")")
	fs.StringVar(&opts.Extension, "extension", "", "the browser to connect to: an id or a name the relay lists (default: the only one)")
	fs.BoolVar(&opts.Dial.Insecure, "insecure", false, "allow ws:// to a relay that is not on this machine (the token then crosses the network in the clear)")
	registerDialogs(fs, &dialogs)
	_ = cmd.MarkFlagRequired("relay")
	return cmd
}
