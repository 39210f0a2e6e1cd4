package main

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/spf13/pflag"

	"github.com/webmcp-cdp/webmcp-cdp/cdp/browsers"
	"github.com/webmcp-cdp/webmcp-cdp/cmd/webmcp-cdp/cli"
	"github.com/webmcp-cdp/webmcp-cdp/cmd/webmcp-cdp/serve"
	"github.com/webmcp-cdp/webmcp-cdp/polyfill"
)

// This file is --isolate: a space per person (serve.Spaces) for a hub that
// a team's agents reach over HTTP with OAuth tokens.

// The values of --isolate.
const isolateUser, isolateNone = "user", "none"

// spaceFlags say whether each person gets a space of their own.
type spaceFlags struct {
	isolate string
	idle    time.Duration
	max     int
}

func (f *spaceFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.isolate, "isolate", "", "user: each person (their OAuth token's issuer and subject) gets a browser context of their own, with their own tabs, cookies and tools; none: everyone shares the browser (default: user with --oauth-issuer, else none)")
	cli.OneOf(fs, "isolate", []string{isolateUser, isolateNone})
	fs.DurationVar(&f.idle, "space-idle", serve.DefaultSpaceIdle, "with --isolate user, close a person's space after this long without a request (its context and tabs end; it opens again at their next request)")
	fs.IntVar(&f.max, "max-spaces", serve.DefaultMaxSpaces, "with --isolate user, the most spaces open at once; a newcomer past it gets HTTP 503 with Retry-After")
}

// mode returns the isolation asked for: user or none, from --isolate and
// whether OAuth mode tells people apart.
func (f *spaceFlags) mode(oauth bool) string {
	switch {
	case f.isolate != "":
		return f.isolate
	case oauth:
		return isolateUser
	}
	return isolateNone
}

// check refuses --isolate user where there is no person to tell apart, and
// bounds that make no sense.
func (f *spaceFlags) check(oauth, relay bool) error {
	if err := f.options(nil, "").Check(); err != nil {
		return cli.Usage(err)
	}
	if f.mode(oauth) != isolateUser {
		if oauth {
			slog.Warn("--isolate none: everyone who gets in shares one browser: its cookies and sign-ins, its tabs and their tools")
		}
		return nil
	}
	if relay {
		return cli.Usage(errors.New("--isolate user with --relay: the relay keeps its users apart itself; drop --isolate"))
	} else if !oauth {
		return cli.Usage(errors.New("--isolate user tells people apart by their OAuth token: give --http with --oauth-issuer, or use --isolate none (stdio and a static --token serve one person)"))
	}
	return nil
}

// options are the spaces' options with the start URLs and --record's file.
func (f *spaceFlags) options(urls []string, record string) serve.SpacesOptions {
	return serve.SpacesOptions{URLs: urls, Idle: f.idle, Max: f.max, Record: record}
}

// runSpaces serves a space per person, each a browser of its own from sb.
func runSpaces(ctx context.Context, bf *browserFlags, sf *spaceFlags, backend polyfill.Backend, urls []string, sb serve.SpaceBrowsers) error {
	so := sf.options(urls, bf.serve.record)
	bf.serve.record = "" // each space records apart (FILE.<id>.ext): nothing at FILE itself
	opts, err := bf.serve.options(backend, false)
	if err != nil {
		return err
	}
	sv, err := bf.serving(ctx)
	if err != nil {
		return err
	}
	return serve.RunSpacesFrom(ctx, sb, opts, sv, so)
}

// launchSpaces is launch --isolate user: a Grid session or a launched
// browser per space with --selenium or --browsers N (pool, when given:
// at most N at once), else a browser context per space in one launched
// browser.
func launchSpaces(ctx context.Context, bf *browserFlags, sf *spaceFlags, backend polyfill.Backend, urls []string, lf launchFlags, grid *browsers.GridOptions, pool int, given, other bool) error {
	if other {
		return cli.Usage(errors.New("--isolate user with --browser or --relaunch: a space's browser comes from --selenium, --browsers N or the one launched, and a space whose browser is lost opens again at the person's next request; drop them, or use --isolate none"))
	}
	sb := serve.SpaceBrowsers{Grid: grid, Launch: lf.options(backend)}
	if given {
		sb.Pool = pool
	}
	return runSpaces(ctx, bf, sf, backend, urls, sb)
}
