// Package oauth makes an HTTP server an OAuth 2.1 resource server: it checks
// the bearer tokens of real authorization servers and answers the way the
// MCP authorization spec asks.
//
// A [Verifier] knows the configured issuers by their metadata (RFC 8414, or
// OpenID discovery): JWT access tokens (RFC 9068) are checked against the
// issuer's keys (a JWKS cache, refetched on an unknown key id at a bounded
// rate) with an allow-list of algorithms, iss, exp and nbf with a small
// skew; opaque tokens go to the issuer's introspection endpoint (RFC 7662)
// with a short cache. A [Guard] is the HTTP side: protected-resource
// metadata (RFC 9728), the WWW-Authenticate challenges of RFC 6750 (401
// with resource_metadata, invalid_token, 403 insufficient_scope naming the
// scopes), the audience check against the resource's canonical URL (RFC
// 8707), and the scopes each request needs.
//
// Signatures and keys are the libraries' work: github.com/golang-jwt/jwt/v5
// verifies, github.com/go-jose/go-jose/v4 reads the JWKS
// (docs/decisions/2026-11-28-oauth-library.md).
package oauth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Errors of [Verifier.Verify]. Each comes wrapped with the reason, worded
// for the client (no secret in it).
var (
	// ErrInvalidToken: the token is not good here (malformed, expired,
	// foreign, badly signed, revoked, another audience). 401 invalid_token.
	ErrInvalidToken = errors.New("invalid token")
	// ErrUnavailable: the token could not be checked now (the issuer's
	// introspection endpoint did not answer, or too many checks at once).
	// 503; the client may try again.
	ErrUnavailable = errors.New("cannot check the token now")
)

// Defaults of [Config].
const (
	DefaultClockSkew          = 30 * time.Second
	DefaultRefetchInterval    = 10 * time.Second
	DefaultIntrospectionCache = 10 * time.Second
	// maxTokenBytes bounds a bearer token: real access tokens are a few
	// KiB at most.
	maxTokenBytes = 16 << 10
	// maxDocBytes bounds a metadata, JWKS or introspection document.
	maxDocBytes = 1 << 20
)

// DefaultAlgorithms are the JWS algorithms accepted unless
// Config.Algorithms says otherwise: asymmetric ones only, so that no key
// published in a JWKS can ever serve as an HMAC secret.
var DefaultAlgorithms = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// Config configures a [Verifier].
type Config struct {
	// Issuers are the authorization servers whose tokens are taken, by
	// issuer identifier (an https URL, or http on loopback).
	Issuers []string
	// Algorithms are the JWS algorithms accepted (default
	// DefaultAlgorithms). HMAC ("HS…") and "none" are never accepted.
	Algorithms []string
	// ClockSkew is the tolerance on exp and nbf (default DefaultClockSkew;
	// negative means none).
	ClockSkew time.Duration
	// RefetchInterval is the least time between two fetches of an
	// issuer's JWKS when tokens name a key id it does not know (default
	// DefaultRefetchInterval).
	RefetchInterval time.Duration
	// IntrospectionClientID and IntrospectionClientSecret are this
	// resource server's credentials at the issuers' introspection
	// endpoints; without them opaque tokens are refused.
	IntrospectionClientID, IntrospectionClientSecret string
	// IntrospectionCache is how long an introspection answer is kept
	// (default DefaultIntrospectionCache; never past the token's exp;
	// negative means not at all).
	IntrospectionCache time.Duration
	// IntrospectionRate bounds introspection requests per second, in all
	// (default 20, with bursts of 40): a flood of made-up opaque tokens
	// cannot hammer the issuer.
	IntrospectionRate float64
	// HTTPClient fetches metadata, keys and introspection answers
	// (default: a client with a 10 s timeout).
	HTTPClient *http.Client
	// Logger gets key refetches and failures (default slog.Default()).
	Logger *slog.Logger
	// Now is the clock (default time.Now); tests set it.
	Now func() time.Time
}

// Principal is who a valid token speaks for.
type Principal struct {
	// Issuer issued the token; Subject is its sub, ClientID its client_id
	// (or azp); either may be empty.
	Issuer, Subject, ClientID string
	// Scopes are the token's scopes.
	Scopes []string
	// Audience are the token's audiences (aud).
	Audience []string
	// Expiry is the token's exp (zero when it has none, as some
	// introspection answers).
	Expiry time.Time
	// TokenID is the token's jti, when it has one.
	TokenID string
}

// HasScope says whether the token carries scope.
func (p *Principal) HasScope(scope string) bool { return slices.Contains(p.Scopes, scope) }

// HasAudience says whether resource is one of the token's audiences. The
// comparison is exact, but for one trailing slash (RFC 9728 §3.3
// identifiers and RFC 8707 resource indicators differ on it between
// authorization servers).
func (p *Principal) HasAudience(resource string) bool {
	want := strings.TrimSuffix(resource, "/")
	for _, a := range p.Audience {
		if a == resource || strings.TrimSuffix(a, "/") == want {
			return true
		}
	}
	return false
}

// Verifier checks bearer tokens of the configured issuers.
type Verifier struct {
	cfg     Config
	issuers map[string]*issuer // by issuer identifier
	order   []*issuer          // as configured
	algs    []string
	intro   *introspector // nil without introspection credentials
	jwts    *tokenCache   // verified JWTs, so a client's next request costs no signature check
}

// NewVerifier reads each issuer's metadata and keys, and fails when one
// cannot be read: a server that starts must be able to check tokens.
func NewVerifier(ctx context.Context, cfg Config) (*Verifier, error) {
	if len(cfg.Issuers) == 0 {
		return nil, errors.New("no OAuth issuer configured: give --oauth-issuer URL")
	}
	if cfg.ClockSkew == 0 {
		cfg.ClockSkew = DefaultClockSkew
	}
	cfg.ClockSkew = max(cfg.ClockSkew, 0)
	if cfg.RefetchInterval <= 0 {
		cfg.RefetchInterval = DefaultRefetchInterval
	}
	if cfg.IntrospectionCache == 0 {
		cfg.IntrospectionCache = DefaultIntrospectionCache
	}
	if cfg.IntrospectionRate <= 0 {
		cfg.IntrospectionRate = 20
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	algs, err := checkAlgorithms(cfg.Algorithms)
	if err != nil {
		return nil, err
	}
	v := &Verifier{cfg: cfg, issuers: map[string]*issuer{}, algs: algs, jwts: newTokenCache(1024)}
	for _, id := range cfg.Issuers {
		if _, dup := v.issuers[id]; dup {
			continue
		}
		is, err := discover(ctx, cfg.HTTPClient, id)
		if err != nil {
			return nil, err
		}
		if is.meta.JWKSURI != "" {
			is.keys = newKeySet(is.meta.JWKSURI, cfg.HTTPClient, cfg.RefetchInterval, cfg.Logger, cfg.Now)
			if err := is.keys.load(ctx); err != nil {
				return nil, fmt.Errorf("OAuth issuer %s: %w", id, err)
			}
		}
		v.issuers[id] = is
		v.order = append(v.order, is)
	}
	if cfg.IntrospectionClientID != "" {
		var endpoints []*issuer
		for _, is := range v.order {
			if is.meta.IntrospectionEndpoint != "" {
				endpoints = append(endpoints, is)
			}
		}
		if len(endpoints) == 0 {
			return nil, errors.New("introspection credentials are set, but no configured issuer's metadata names an introspection_endpoint")
		}
		v.intro = newIntrospector(cfg, endpoints)
	}
	return v, nil
}

// checkAlgorithms returns the allow-list, refusing HMAC and none.
func checkAlgorithms(algs []string) ([]string, error) {
	if len(algs) == 0 {
		return DefaultAlgorithms, nil
	}
	for _, a := range algs {
		if !slices.Contains(DefaultAlgorithms, a) {
			return nil, fmt.Errorf("JWS algorithm %q is not allowed for access tokens: choose among %s", a, strings.Join(DefaultAlgorithms, ", "))
		}
	}
	return algs, nil
}

// Issuers returns the issuer identifiers, as configured.
func (v *Verifier) Issuers() []string {
	ids := make([]string, len(v.order))
	for i, is := range v.order {
		ids[i] = is.id
	}
	return ids
}

// Verify checks token and says whom it speaks for. A JWT (three
// dot-separated parts) is checked against its issuer's keys; anything else
// goes to introspection when it is configured. Errors wrap ErrInvalidToken
// or ErrUnavailable. The audience is the caller's to check
// ([Principal.HasAudience]).
func (v *Verifier) Verify(ctx context.Context, token string) (*Principal, error) {
	if len(token) > maxTokenBytes {
		return nil, fmt.Errorf("%w: the token is longer than %d bytes", ErrInvalidToken, maxTokenBytes)
	}
	if strings.Count(token, ".") == 2 {
		return v.verifyJWT(ctx, token)
	}
	if v.intro == nil {
		return nil, fmt.Errorf("%w: the token is not a JWT, and this server has no introspection credentials to check opaque tokens", ErrInvalidToken)
	}
	return v.intro.check(ctx, token)
}
