package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
)

// MetadataPath is where protected-resource metadata is served (RFC 9728
// §3); the path-suffixed form appends the resource's path.
const MetadataPath = "/.well-known/oauth-protected-resource"

// GuardOptions configures a [Guard].
type GuardOptions struct {
	// Resource is the protected resource's canonical URL, such as
	// https://hub.example.com/mcp: tokens must name it as their audience.
	Resource string
	// Scopes are the scopes the resource knows, for its metadata.
	Scopes []string
	// ResourceName names the resource for people, in its metadata.
	ResourceName string
	// ChallengeScopes are the scopes a 401 challenge names: what a client
	// should ask for first (it steps up on a 403 that names more). The
	// body of a request without a good token is never read, so 401s
	// cannot name the request's own needs.
	ChallengeScopes []string
	// Logger gets the requests let in and refused (default slog.Default()).
	Logger *slog.Logger
}

// Guard is the HTTP side of a resource server: it serves the resource's
// metadata and lets in only requests with a valid token for the resource
// and the scopes the request needs.
type Guard struct {
	v        *Verifier
	resource string
	metaURL  string // the metadata's address, for challenges
	paths    []string
	meta     []byte
	first    []string // ChallengeScopes
	logger   *slog.Logger
}

// resourceMetadata is the protected-resource metadata served (RFC 9728 §2).
type resourceMetadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers"`
	ScopesSupported        []string `json:"scopes_supported,omitempty"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	ResourceName           string   `json:"resource_name,omitempty"`
}

// NewGuard makes a guard for the resource, taking the tokens v takes.
func NewGuard(v *Verifier, opts GuardOptions) (*Guard, error) {
	u, err := url.Parse(opts.Resource)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.Fragment != "" || u.RawQuery != "" {
		return nil, fmt.Errorf("the resource URL %q: give the endpoint's canonical URL, such as https://hub.example.com/mcp (no query or fragment)", opts.Resource)
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	meta, err := json.Marshal(resourceMetadata{
		Resource:               opts.Resource,
		AuthorizationServers:   v.Issuers(),
		ScopesSupported:        opts.Scopes,
		BearerMethodsSupported: []string{"header"},
		ResourceName:           opts.ResourceName,
	})
	if err != nil {
		return nil, err
	}
	path := strings.TrimSuffix(u.Path, "/")
	g := &Guard{v: v, resource: opts.Resource, meta: meta, first: opts.ChallengeScopes, logger: opts.Logger, paths: []string{MetadataPath}}
	if path != "" {
		g.paths = append(g.paths, MetadataPath+path)
	}
	m := *u
	m.Path = MetadataPath + path
	g.metaURL = m.String()
	return g, nil
}

// Resource returns the resource's canonical URL.
func (g *Guard) Resource() string { return g.resource }

// MetadataURL returns the address of the resource's metadata, as named in
// challenges.
func (g *Guard) MetadataURL() string { return g.metaURL }

// MetadataPaths are the paths the metadata is served at: the root form,
// and the form suffixed with the resource's path.
func (g *Guard) MetadataPaths() []string { return g.paths }

// MetadataHandler serves the resource's metadata. It is public (any origin
// may read it) and cacheable for a while.
func (g *Guard) MetadataHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		switch r.Method {
		case http.MethodOptions:
			w.Header().Set("Access-Control-Allow-Methods", "GET, OPTIONS")
			w.WriteHeader(http.StatusNoContent)
			return
		case http.MethodGet, http.MethodHead:
		default:
			w.Header().Set("Allow", "GET, HEAD, OPTIONS")
			http.Error(w, "method not allowed: GET the metadata", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "public, max-age=300")
		w.Write(g.meta)
	})
}

// Need is what a request needs: the scopes, all of them, and for the logs
// what it does. Act marks a request that acts (calls a tool, opens a tab):
// it is logged at Info, the others at Debug.
type Need struct {
	Scopes []string
	Op     string
	Act    bool
}

// NeedFunc says what a request needs. It may read the body (and must then
// leave r.Body readable for the handler); an error refuses the request
// with 400 and the error's text.
type NeedFunc func(r *http.Request) (Need, error)

// principalKey keys a request's principal in its context.
type principalKey struct{}

// PrincipalFrom returns the principal a guard let in, or nil.
func PrincipalFrom(ctx context.Context) *Principal {
	p, _ := ctx.Value(principalKey{}).(*Principal)
	return p
}

// Require lets through to next only the requests whose bearer token is
// valid for the resource and carries the scopes need names, with the
// principal in the request's context; need is asked only then (a request
// without a good token is refused before its body is read). The others get
// the challenges of RFC 6750 §3 with the metadata's address (RFC 9728
// §5.1): 401 without a token and 401 invalid_token for a bad one (naming
// ChallengeScopes), 403 insufficient_scope naming the scopes the request
// needs (so a client steps up), 400 invalid_request for a token in the
// query string.
func (g *Guard) Require(need NeedFunc, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Has("access_token") {
			g.refuse(w, r, http.StatusBadRequest, "invalid_request", "send the access token in the Authorization header, never in the URL", nil)
			return
		}
		token, ok := bearer(r)
		if !ok {
			g.refuse(w, r, http.StatusUnauthorized, "", "this endpoint needs an OAuth access token (Authorization: Bearer …); its metadata names the authorization server", nil, g.first...)
			return
		}
		if token == "" {
			g.refuse(w, r, http.StatusUnauthorized, "invalid_token", "the Authorization header is not \"Bearer TOKEN\"", nil, g.first...)
			return
		}
		p, err := g.v.Verify(r.Context(), token)
		switch {
		case errors.Is(err, ErrUnavailable):
			w.Header().Set("Retry-After", "1")
			g.logger.Warn("could not check an OAuth token", "err", err)
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		case err != nil:
			g.refuse(w, r, http.StatusUnauthorized, "invalid_token", reason(err), nil, g.first...)
			return
		case !p.HasAudience(g.resource):
			g.refuse(w, r, http.StatusUnauthorized, "invalid_token", fmt.Sprintf("the token is not for this resource: its audience is %q, not %q (ask the authorization server for a token with resource=%s)", p.Audience, g.resource, g.resource), p, g.first...)
			return
		}
		n, err := need(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var missing []string
		for _, s := range n.Scopes {
			if !p.HasScope(s) {
				missing = append(missing, s)
			}
		}
		if len(missing) > 0 {
			g.refuse(w, r, http.StatusForbidden, "insufficient_scope", fmt.Sprintf("%s needs the scope %s; the token has %q", n.Op, strings.Join(n.Scopes, " "), p.Scopes), p, n.Scopes...)
			return
		}
		level := slog.LevelDebug
		if n.Act {
			level = slog.LevelInfo
		}
		g.logger.Log(r.Context(), level, "OAuth request let in", "op", n.Op, "sub", p.Subject, "client_id", p.ClientID, "issuer", p.Issuer)
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, p)))
	})
}

// bearer returns the request's bearer token: ok is false without an
// Authorization header, token "" when the header is not "Bearer TOKEN".
func bearer(r *http.Request) (token string, ok bool) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return "", false
	}
	scheme, token, found := strings.Cut(h, " ")
	token = strings.TrimSpace(token)
	if !found || !strings.EqualFold(scheme, "bearer") || token == "" || strings.ContainsAny(token, " \t") {
		return "", true
	}
	return token, true
}

// reason is an error's text without the sentinel's prefix.
func reason(err error) string {
	msg := err.Error()
	for _, s := range []error{ErrInvalidToken, ErrUnavailable} {
		msg = strings.TrimPrefix(msg, s.Error()+": ")
	}
	return msg
}

// refuse answers with a Bearer challenge: the metadata's address, the
// error code when there is one, and the scopes needed. The description
// goes into the body too; p (when known) into the log.
func (g *Guard) refuse(w http.ResponseWriter, r *http.Request, status int, code, desc string, p *Principal, scopes ...string) {
	params := []string{fmt.Sprintf("resource_metadata=%q", g.metaURL)}
	if code != "" {
		params = append(params, fmt.Sprintf("error=%q", code), fmt.Sprintf("error_description=%q", quotable(desc)))
	}
	if len(scopes) > 0 {
		params = append(params, fmt.Sprintf("scope=%q", strings.Join(scopes, " ")))
	}
	w.Header().Set("WWW-Authenticate", "Bearer "+strings.Join(params, ", "))
	attrs := []any{"status", status, "reason", desc, "remote", r.RemoteAddr}
	if p != nil {
		attrs = append(attrs, "sub", p.Subject, "client_id", p.ClientID)
	}
	if code != "" {
		g.logger.Info("refused an OAuth request", attrs...)
	}
	http.Error(w, desc, status)
}

// quotable keeps a description within RFC 6750 §3's error_description
// characters (printable ASCII but " and \).
func quotable(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e || r == '"' || r == '\\' {
			return '\''
		}
		return r
	}, s)
}
