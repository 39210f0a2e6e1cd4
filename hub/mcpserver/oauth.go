package mcpserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/segmentio/encoding/json"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/internal/oauth"
)

// This file is the HTTP endpoint's OAuth mode (docs/auth.md): the endpoint
// is an OAuth 2.1 resource server. Tokens come from the authorization
// servers an oauth.Verifier knows; each request needs a scope by what it
// does, read from its JSON-RPC body: ReadScope to list and read,
// CallScope to call tools and open, reload or close tabs.

// Default scope names of AuthOptions.
const (
	DefaultReadScope = "webmcp:read"
	DefaultCallScope = "webmcp:call"
)

// AuthOptions puts the HTTP endpoint in OAuth mode.
type AuthOptions struct {
	// Verifier checks the tokens.
	Verifier *oauth.Verifier
	// PublicURL is the endpoint's canonical URL, which tokens must name as
	// their audience, when clients reach it through a proxy or by another
	// name (https://hub.example.com/mcp). Default: the URL served.
	PublicURL string
	// ReadScope and CallScope name the scopes (default DefaultReadScope,
	// DefaultCallScope).
	ReadScope, CallScope string
}

// readTools are the server's own tools that only read.
var readTools = map[string]bool{"webmcp_list_tools": true, "webmcp_list_tabs": true}

// readMethods are the JSON-RPC methods that list or read, or keep the
// session going; every other method needs CallScope.
var readMethods = map[string]bool{
	"initialize": true, "ping": true, "server/discover": true, "subscriptions/listen": true,
	"tools/list": true, "prompts/list": true, "prompts/get": true, "completion/complete": true,
	"resources/list": true, "resources/templates/list": true, "resources/read": true,
	"resources/subscribe": true, "resources/unsubscribe": true, "logging/setLevel": true,
}

// oauthEdge is OAuth mode's part of the HTTP handler.
type oauthEdge struct {
	guard      *oauth.Guard
	read, call string
	maxBody    int64
}

// newOAuthEdge makes the guard of the endpoint opts.Auth.PublicURL.
func newOAuthEdge(logger *slog.Logger, opts HTTPOptions) (*oauthEdge, error) {
	a := opts.Auth
	if a.Verifier == nil {
		return nil, errors.New("OAuth mode needs a token verifier")
	}
	e := &oauthEdge{read: a.ReadScope, call: a.CallScope, maxBody: opts.MaxBodyBytes}
	if e.read == "" {
		e.read = DefaultReadScope
	}
	if e.call == "" {
		e.call = DefaultCallScope
	}
	g, err := oauth.NewGuard(a.Verifier, oauth.GuardOptions{
		Resource:        a.PublicURL,
		Scopes:          []string{e.read, e.call},
		ChallengeScopes: []string{e.read},
		ResourceName:    "webmcp-cdp: the tools of the pages of a browser",
		Logger:          logger,
	})
	if err != nil {
		return nil, fmt.Errorf("--public-url: %w", err)
	}
	e.guard = g
	return e, nil
}

// mount serves the protected-resource metadata on mux.
func (e *oauthEdge) mount(mux *http.ServeMux) {
	for _, p := range e.guard.MetadataPaths() {
		mux.Handle(p, e.guard.MetadataHandler())
	}
}

// mcp guards the MCP handler: the scope by the request, and the token's
// principal handed to the go-sdk as its TokenInfo (so a session stays
// with the principal that opened it, and handlers see who calls).
func (e *oauthEdge) mcp(next http.Handler) http.Handler {
	sdk := auth.RequireBearerToken(func(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
		p := oauth.PrincipalFrom(ctx)
		if p == nil {
			return nil, fmt.Errorf("%w: not let in by the OAuth guard", auth.ErrInvalidToken)
		}
		return tokenInfo(p), nil
	}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true, ClockSkew: oauth.DefaultClockSkew})
	return e.guard.Require(e.needOf, sdk(next))
}

// status guards the status page: it shows the clients and calls, so it
// needs ReadScope.
func (e *oauthEdge) status(next http.Handler) http.Handler {
	return e.guard.Require(func(*http.Request) (oauth.Need, error) {
		return oauth.Need{Scopes: []string{e.read}, Op: "the status page"}, nil
	}, next)
}

// metrics guards /metrics: like the status page, it needs ReadScope.
func (e *oauthEdge) metrics(next http.Handler) http.Handler {
	return e.guard.Require(func(*http.Request) (oauth.Need, error) {
		return oauth.Need{Scopes: []string{e.read}, Op: "the metrics"}, nil
	}, next)
}

// tokenInfo is the go-sdk's view of a principal. UserID names the issuer
// and the subject (or the client, for a token of its own).
func tokenInfo(p *oauth.Principal) *auth.TokenInfo {
	who := p.Subject
	if who == "" {
		who = "client:" + p.ClientID
	}
	return &auth.TokenInfo{
		Scopes:     p.Scopes,
		Expiration: p.Expiry,
		UserID:     p.Issuer + " " + who,
		Extra:      map[string]any{"sub": p.Subject, "client_id": p.ClientID, "iss": p.Issuer},
	}
}

// callerFromToken names, for the call records (the status page's last
// calls), who asks for a tools/call: the OAuth token's subject and client.
func callerFromToken(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "tools/call" || method == "prompts/get" || method == "resources/read" {
			if who := callerOf(req.GetExtra()); who != "" {
				ctx = hub.WithCaller(ctx, who)
			}
		}
		return next(ctx, method, req)
	}
}

// callerOf names the principal of an OAuth token ("" for none, or for a
// static --token): "sub (client id)", or the client alone.
func callerOf(extra *mcp.RequestExtra) string {
	if extra == nil || extra.TokenInfo == nil {
		return ""
	}
	sub, _ := extra.TokenInfo.Extra["sub"].(string)
	client, _ := extra.TokenInfo.Extra["client_id"].(string)
	switch {
	case sub != "" && client != "" && sub != client:
		return sub + " (" + client + ")"
	case sub != "":
		return sub
	case client != "":
		return "client " + client
	}
	return ""
}

// rpcPeek is what the scope check reads of a JSON-RPC message: the same
// members, decoded by the same decoder with the same settings (exact
// member names), as the go-sdk's, so both read the same method and tool.
type rpcPeek struct {
	Method json.RawMessage `json:"method"`
	Params json.RawMessage `json:"params"`
}

// needOf says what a request to /mcp needs. A POST's body (one message or
// a batch) is read, bounded, and put back for the handler; every message
// counts. GET (the event stream) and DELETE (the end of a session) read.
func (e *oauthEdge) needOf(r *http.Request) (oauth.Need, error) {
	if r.Method != http.MethodPost {
		return oauth.Need{Scopes: []string{e.read}, Op: r.Method + " " + r.URL.Path}, nil
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, e.maxBody+1))
	r.Body = struct {
		io.Reader
		io.Closer
	}{bytes.NewReader(body), r.Body}
	if err != nil {
		return oauth.Need{}, fmt.Errorf("reading the request body: %w", err)
	}
	if int64(len(body)) > e.maxBody {
		return oauth.Need{}, fmt.Errorf("the request body is larger than %d bytes (--max-body-bytes)", e.maxBody)
	}
	return e.needOfBody(body), nil
}

// needOfBody reads the messages of a POST body. A body that does not
// parse needs ReadScope only: the handler refuses it without acting.
func (e *oauthEdge) needOfBody(body []byte) oauth.Need {
	n := oauth.Need{Scopes: []string{e.read}}
	var ops []string
	for _, m := range peekMessages(body) {
		op, call := e.classify(m)
		ops = append(ops, op)
		if call {
			n.Scopes, n.Act = []string{e.read, e.call}, true
		}
	}
	n.Op = strings.Join(ops, ", ")
	if n.Op == "" {
		n.Op = "a request"
	}
	if n.Act {
		n.Scopes = []string{e.call} // the read scope is not asked as well
	}
	return n
}

// peekMessages reads the messages of a POST body: one, or a batch; none
// when it does not parse.
func peekMessages(body []byte) []rpcPeek {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		var msgs []rpcPeek
		if unmarshalExact(trimmed, &msgs) != nil {
			return nil
		}
		return msgs
	}
	var m rpcPeek
	if unmarshalExact(trimmed, &m) != nil {
		return nil
	}
	return []rpcPeek{m}
}

// classify names one message's operation and says whether it needs
// CallScope: tools/call of any tool but the read-only own ones, and any
// method not known to read.
func (e *oauthEdge) classify(m rpcPeek) (op string, call bool) {
	if len(m.Method) == 0 {
		return "a response", false // the client's answer to a server request
	}
	var method string
	if unmarshalExact(m.Method, &method) != nil {
		return "a request", false
	}
	if strings.HasPrefix(method, "notifications/") {
		return method, false
	}
	if method != "tools/call" {
		return method, !readMethods[method]
	}
	var p struct {
		Name string `json:"name"`
	}
	if unmarshalExact(m.Params, &p) != nil {
		return method, true
	}
	return method + " " + p.Name, !readTools[p.Name]
}

// unmarshalExact decodes the first JSON value of data as the go-sdk's
// decoder does: member names match exactly. (Parse, not a Decoder: a
// Decoder starts with a 32 KiB buffer.)
func unmarshalExact(data []byte, v any) error {
	_, err := json.Parse(data, v, json.DontMatchCaseInsensitiveStructFields|json.DontCopyRawMessage)
	return err
}
