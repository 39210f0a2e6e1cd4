package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/webmcp-cdp/webmcp-cdp/cmd/webmcp-cdp/relaycmd"
	"github.com/webmcp-cdp/webmcp-cdp/hub/relay"
)

// relayFlags are the flags that make launch and attach the browser side of
// a relay instead of an MCP stdio server.
type relayFlags struct {
	url, token, name string
	allowRawCDP      bool
	insecure         bool
}

func (f *relayFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.url, "relay", "", "serve this browser through a relay instead of on stdio: the relay's browser endpoint, wss://HOST/extension")
	fs.StringVar(&f.token, "relay-token", "", "the token (JWT) for --relay (default $"+relaycmd.TokenEnv+")")
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
		f.token = os.Getenv(relaycmd.TokenEnv)
	}
	if f.token == "" {
		return fmt.Errorf("--relay needs a token: pass --relay-token JWT or set $%s", relaycmd.TokenEnv)
	}
	if _, err := relay.CheckURL(f.url, f.insecure); err != nil {
		return fmt.Errorf("--relay: %w", err)
	}
	return nil
}

func (f *relayFlags) enabled() bool { return f.url != "" }
