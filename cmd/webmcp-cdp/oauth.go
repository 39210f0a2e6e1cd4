package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/webmcp-cdp/webmcp-cdp/hub/mcpserver"
	"github.com/webmcp-cdp/webmcp-cdp/internal/oauth"
)

// oauthFlags put the HTTP endpoint in OAuth mode (docs/auth.md): tokens
// from an authorization server, scopes per operation.
type oauthFlags struct {
	issuers      []string
	publicURL    string
	clientID     string
	clientSecret string
	readScope    string
	callScope    string
	skew         time.Duration
	introCache   time.Duration
	refetch      time.Duration
}

func (f *oauthFlags) register(fs *pflag.FlagSet) {
	fs.StringSliceVar(&f.issuers, "oauth-issuer", nil, "serve --http as an OAuth 2.1 resource server taking access tokens of this authorization server (its issuer URL; repeatable); instead of --token")
	fs.StringVar(&f.publicURL, "public-url", "", "the /mcp endpoint's canonical URL as clients reach it (through a proxy or by name), such as https://hub.example.com/mcp: OAuth tokens must name it as their audience (default: the URL served)")
	fs.StringVar(&f.clientID, "oauth-introspection-client-id", "", "this server's client id at the issuer's introspection endpoint, to check opaque (non-JWT) tokens")
	fs.StringVar(&f.clientSecret, "oauth-introspection-client-secret", "", "the secret of --oauth-introspection-client-id (better in WEBMCP_CDP_OAUTH_INTROSPECTION_CLIENT_SECRET or the config file)")
	fs.StringVar(&f.readScope, "oauth-read-scope", mcpserver.DefaultReadScope, "the scope that lets a token list and read (tools, tabs, prompts, resources, the status page)")
	fs.StringVar(&f.callScope, "oauth-call-scope", mcpserver.DefaultCallScope, "the scope that lets a token call tools and open, reload or close tabs")
	fs.DurationVar(&f.skew, "oauth-clock-skew", oauth.DefaultClockSkew, "tolerance on an OAuth token's exp and nbf for clocks that drift")
	fs.DurationVar(&f.refetch, "oauth-jwks-refetch-interval", oauth.DefaultRefetchInterval, "least time between two fetches of an issuer's keys when tokens name a key id it does not know (key rotation; a flood of made-up key ids costs the issuer one request per interval)")
	fs.DurationVar(&f.introCache, "oauth-introspection-cache", oauth.DefaultIntrospectionCache, "how long an introspection answer is kept (a revoked opaque token works this long at most); 0 keeps none")
}

// enabled says whether OAuth mode is asked for.
func (f *oauthFlags) enabled() bool { return len(f.issuers) > 0 }

// check refuses OAuth flags that do not fit, before anything starts.
func (f *oauthFlags) check(addr string, loopback bool, token string) error {
	if !f.enabled() {
		for _, n := range []struct{ name, v string }{{"public-url", f.publicURL}, {"oauth-introspection-client-id", f.clientID}} {
			if n.v != "" {
				return fmt.Errorf("--%s is for OAuth mode: give --oauth-issuer too", n.name)
			}
		}
		return nil
	}
	if addr == "" {
		return errors.New("--oauth-issuer is for the HTTP endpoint: give --http too")
	}
	if token != "" {
		return errors.New("--token (or WEBMCP_CDP_TOKEN) and --oauth-issuer are both set: the HTTP endpoint takes either a static token or OAuth tokens; drop one")
	}
	if f.publicURL != "" {
		u, err := url.Parse(f.publicURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			return fmt.Errorf("--public-url %q: give the endpoint's URL as clients reach it, such as https://hub.example.com/mcp", f.publicURL)
		}
	} else if !loopback {
		return fmt.Errorf("--http %s is not a loopback address: with --oauth-issuer give --public-url, the URL clients reach /mcp at (tokens name it as their audience)", addr)
	}
	if (f.clientID == "") != (f.clientSecret == "") {
		return errors.New("--oauth-introspection-client-id and --oauth-introspection-client-secret go together")
	}
	if f.readScope == "" || f.callScope == "" || f.readScope == f.callScope || strings.ContainsAny(f.readScope+f.callScope, " \"\\") {
		return fmt.Errorf("--oauth-read-scope %q and --oauth-call-scope %q: two different scope names without spaces or quotes", f.readScope, f.callScope)
	}
	if f.refetch < time.Second {
		return fmt.Errorf("--oauth-jwks-refetch-interval %s: at least 1s", f.refetch)
	}
	if f.skew < 0 || f.skew > 5*time.Minute {
		return fmt.Errorf("--oauth-clock-skew %s: between 0s and 5m", f.skew)
	}
	return nil
}

// allowedOrigin is --public-url's origin, for --allowed-host.
func (f *oauthFlags) allowedOrigin() string {
	u, err := url.Parse(f.publicURL)
	if f.publicURL == "" || err != nil {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// auth reads the issuers' metadata and keys and returns OAuth mode's
// options (nil when it is off).
func (f *oauthFlags) auth(ctx context.Context) (*mcpserver.AuthOptions, error) {
	if !f.enabled() {
		return nil, nil
	}
	skew := f.skew
	if skew == 0 {
		skew = -1 // none: Config's zero means the default
	}
	cache := f.introCache
	if cache == 0 {
		cache = -1
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	v, err := oauth.NewVerifier(ctx, oauth.Config{
		Issuers:                   f.issuers,
		ClockSkew:                 skew,
		RefetchInterval:           f.refetch,
		IntrospectionClientID:     f.clientID,
		IntrospectionClientSecret: f.clientSecret,
		IntrospectionCache:        cache,
		Logger:                    slog.Default(),
	})
	if err != nil {
		return nil, err
	}
	return &mcpserver.AuthOptions{Verifier: v, PublicURL: f.publicURL, ReadScope: f.readScope, CallScope: f.callScope}, nil
}
