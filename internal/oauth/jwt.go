package oauth

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// accessClaims are the claims read of a JWT access token (RFC 9068 §2.2),
// with the scope forms identity providers use besides "scope".
type accessClaims struct {
	jwt.RegisteredClaims
	Scope    string `json:"scope"`
	Scp      any    `json:"scp"` // Entra ID: a space-separated string; Okta: a list
	ClientID string `json:"client_id"`
	Azp      string `json:"azp"`
}

// scopes returns the token's scopes from scope, else scp.
func (c *accessClaims) scopes() []string {
	if c.Scope != "" {
		return strings.Fields(c.Scope)
	}
	switch s := c.Scp.(type) {
	case string:
		return strings.Fields(s)
	case []any:
		var out []string
		for _, v := range s {
			if str, ok := v.(string); ok {
				out = append(out, str)
			}
		}
		return out
	}
	return nil
}

// acceptedTypes are the JWT "typ" headers taken for access tokens: RFC
// 9068's, and the plain ones many identity providers still send. Other
// types (ID tokens of some providers, logout tokens, DPoP proofs) are not
// access tokens.
var acceptedTypes = map[string]bool{"": true, "at+jwt": true, "application/at+jwt": true, "jwt": true}

// verifyJWT checks a JWT access token: an allowed algorithm, a configured
// issuer, a signature by one of that issuer's keys, exp (required) and
// nbf with the skew. Verified tokens are kept until they expire.
func (v *Verifier) verifyJWT(ctx context.Context, token string) (*Principal, error) {
	sum := sha256.Sum256([]byte(token))
	now := v.cfg.Now()
	if p := v.jwts.get(sum, now, v.cfg.ClockSkew); p != nil {
		return p, nil
	}
	var claims accessClaims
	var iss *issuer
	parser := jwt.NewParser(
		jwt.WithValidMethods(v.algs),
		jwt.WithLeeway(v.cfg.ClockSkew),
		jwt.WithTimeFunc(v.cfg.Now),
		jwt.WithExpirationRequired(),
	)
	_, err := parser.ParseWithClaims(token, &claims, func(t *jwt.Token) (any, error) {
		if typ, _ := t.Header["typ"].(string); !acceptedTypes[strings.ToLower(typ)] {
			return nil, fmt.Errorf("its type %q is not an access token's (at+jwt)", typ)
		}
		iss = v.issuers[claims.Issuer]
		if iss == nil {
			return nil, fmt.Errorf("its issuer %q is not one this server trusts", claims.Issuer)
		}
		if iss.keys == nil {
			return nil, fmt.Errorf("its issuer %s publishes no keys (jwks_uri) to check JWTs with", iss.id)
		}
		kid, _ := t.Header["kid"].(string)
		keys, err := iss.keys.find(ctx, kid, t.Method.Alg())
		if err != nil {
			return nil, err
		}
		return jwt.VerificationKeySet{Keys: keys}, nil
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %s", ErrInvalidToken, jwtReason(err))
	}
	p := &Principal{
		Issuer:   claims.Issuer,
		Subject:  claims.Subject,
		ClientID: claims.ClientID,
		Scopes:   claims.scopes(),
		Audience: claims.Audience,
		Expiry:   claims.ExpiresAt.Time,
		TokenID:  claims.ID,
	}
	if p.ClientID == "" {
		p.ClientID = claims.Azp
	}
	v.jwts.put(sum, p, now)
	return p, nil
}

// jwtReason words a parse error for the client: what is wrong with the
// token, without the library's prefixes.
func jwtReason(err error) string {
	switch {
	case errors.Is(err, jwt.ErrTokenMalformed):
		return "the token is not a well-formed JWT"
	case errors.Is(err, jwt.ErrTokenExpired):
		return "the token has expired"
	case errors.Is(err, jwt.ErrTokenNotValidYet):
		return "the token is not valid yet (nbf)"
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return "the token has no exp claim"
	case errors.Is(err, jwt.ErrTokenSignatureInvalid) && strings.Contains(err.Error(), "signing method"):
		return "the token's signing algorithm is not allowed"
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		return "the token's signature does not verify"
	case errors.Is(err, jwt.ErrTokenUnverifiable):
		// The key function's own words.
		msg := err.Error()
		if i := strings.LastIndex(msg, "error while executing keyfunc: "); i >= 0 {
			msg = msg[i+len("error while executing keyfunc: "):]
		}
		return msg
	}
	return "the token does not verify: " + err.Error()
}

// tokenCache keeps verified tokens by their SHA-256 until they expire, so
// a client's next request with the same token costs a hash and a lookup.
// It is bounded: when full, expired entries go, then any.
type tokenCache struct {
	max int

	mu sync.Mutex
	m  map[[32]byte]*Principal
}

func newTokenCache(max int) *tokenCache {
	return &tokenCache{max: max, m: make(map[[32]byte]*Principal)}
}

// get returns the principal of a cached token that has not expired (with
// the skew), else nil.
func (c *tokenCache) get(sum [32]byte, now time.Time, skew time.Duration) *Principal {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.m[sum]
	if p == nil {
		return nil
	}
	if !p.Expiry.IsZero() && !now.Before(p.Expiry.Add(skew)) {
		delete(c.m, sum)
		return nil
	}
	return p
}

// put keeps p for its token.
func (c *tokenCache) put(sum [32]byte, p *Principal, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= c.max {
		for k, q := range c.m {
			if !q.Expiry.IsZero() && now.After(q.Expiry) {
				delete(c.m, k)
			}
		}
		for k := range c.m {
			if len(c.m) < c.max {
				break
			}
			delete(c.m, k)
		}
	}
	c.m[sum] = p
}
