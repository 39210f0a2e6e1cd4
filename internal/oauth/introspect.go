package oauth

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// maxIntrospectionCache bounds the introspection answers kept.
const maxIntrospectionCache = 4096

// introspector checks opaque tokens at the issuers' introspection
// endpoints (RFC 7662), keeping answers (active or not) for a short while,
// at a bounded rate.
type introspector struct {
	cfg     Config
	issuers []*issuer
	limit   *rate.Limiter

	mu    sync.Mutex
	cache map[[32]byte]introspected
}

// introspected is a kept answer: p is nil for an inactive token.
type introspected struct {
	p     *Principal
	why   string
	until time.Time
}

func newIntrospector(cfg Config, issuers []*issuer) *introspector {
	return &introspector{
		cfg:     cfg,
		issuers: issuers,
		limit:   rate.NewLimiter(rate.Limit(cfg.IntrospectionRate), int(2*cfg.IntrospectionRate)+1),
		cache:   make(map[[32]byte]introspected),
	}
}

// introspection is an introspection answer (RFC 7662 §2.2).
type introspection struct {
	Active    bool            `json:"active"`
	Scope     string          `json:"scope"`
	ClientID  string          `json:"client_id"`
	Subject   string          `json:"sub"`
	Issuer    string          `json:"iss"`
	Audience  json.RawMessage `json:"aud"` // a string or a list
	ExpiresAt int64           `json:"exp"`
	NotBefore int64           `json:"nbf"`
	TokenID   string          `json:"jti"`
}

// check asks the issuers, in order, about token until one says it is
// active, and keeps the answer.
func (in *introspector) check(ctx context.Context, token string) (*Principal, error) {
	sum := sha256.Sum256([]byte(token))
	now := in.cfg.Now()
	in.mu.Lock()
	if c, ok := in.cache[sum]; ok && now.Before(c.until) {
		in.mu.Unlock()
		if c.p == nil {
			return nil, fmt.Errorf("%w: %s", ErrInvalidToken, c.why)
		}
		return c.p, nil
	}
	in.mu.Unlock()
	if !in.limit.Allow() {
		return nil, fmt.Errorf("%w: too many opaque tokens to introspect at once; try again in a second", ErrUnavailable)
	}
	why := "the authorization server says the token is not active (revoked, expired or unknown)"
	for _, is := range in.issuers {
		ans, err := in.ask(ctx, is, token)
		if err != nil {
			in.cfg.Logger.Warn("OAuth token introspection failed", "issuer", is.id, "err", err)
			return nil, fmt.Errorf("%w: the authorization server's introspection endpoint did not answer; try again", ErrUnavailable)
		}
		if !ans.Active {
			continue
		}
		if ans.Issuer != "" && ans.Issuer != is.id {
			why = fmt.Sprintf("the introspected token names the issuer %q, not %q", ans.Issuer, is.id)
			continue
		}
		p := &Principal{Issuer: is.id, Subject: ans.Subject, ClientID: ans.ClientID, Scopes: strings.Fields(ans.Scope), Audience: audiences(ans.Audience), TokenID: ans.TokenID}
		if ans.ExpiresAt != 0 {
			p.Expiry = time.Unix(ans.ExpiresAt, 0)
			if !now.Before(p.Expiry.Add(in.cfg.ClockSkew)) {
				why = "the token has expired"
				continue
			}
		}
		if ans.NotBefore != 0 && now.Add(in.cfg.ClockSkew).Before(time.Unix(ans.NotBefore, 0)) {
			why = "the token is not valid yet (nbf)"
			continue
		}
		in.keep(sum, introspected{p: p}, now, p.Expiry)
		return p, nil
	}
	in.keep(sum, introspected{why: why}, now, time.Time{})
	return nil, fmt.Errorf("%w: %s", ErrInvalidToken, why)
}

// keep caches an answer for the configured while, never past exp.
func (in *introspector) keep(sum [32]byte, c introspected, now, exp time.Time) {
	if in.cfg.IntrospectionCache < 0 {
		return
	}
	c.until = now.Add(in.cfg.IntrospectionCache)
	if !exp.IsZero() && exp.Before(c.until) {
		c.until = exp
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if len(in.cache) >= maxIntrospectionCache {
		for k, v := range in.cache {
			if !now.Before(v.until) || len(in.cache) >= maxIntrospectionCache {
				delete(in.cache, k)
			}
		}
	}
	in.cache[sum] = c
}

// ask posts token to an issuer's introspection endpoint, authenticated
// with client_secret_basic (RFC 7662 §2.1, RFC 6749 §2.3.1).
func (in *introspector) ask(ctx context.Context, is *issuer, token string) (*introspection, error) {
	form := url.Values{"token": {token}, "token_type_hint": {"access_token"}}
	req, err := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodPost, is.meta.IntrospectionEndpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.SetBasicAuth(url.QueryEscape(in.cfg.IntrospectionClientID), url.QueryEscape(in.cfg.IntrospectionClientSecret))
	resp, err := in.cfg.HTTPClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("HTTP status %d from %s (check the introspection client id and secret): %s", resp.StatusCode, is.meta.IntrospectionEndpoint, strings.TrimSpace(string(body)))
	}
	var ans introspection
	if err := decodeBounded(resp.Body, &ans); err != nil {
		return nil, fmt.Errorf("%s: %w", is.meta.IntrospectionEndpoint, err)
	}
	return &ans, nil
}

// audiences reads aud, a string or a list of strings.
func audiences(raw json.RawMessage) []string {
	if len(raw) == 0 {
		return nil
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}
	}
	var many []string
	if json.Unmarshal(raw, &many) == nil {
		return many
	}
	return nil
}
