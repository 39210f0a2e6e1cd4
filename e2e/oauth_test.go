package e2e

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/auth/extauth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// TestOAuthResourceServer: webmcp-cdp takes the tokens of a real
// authorization server, and only those, for the scopes they carry.
func TestOAuthResourceServer(t *testing.T) {
	t.Parallel()
	base := serveFixtures(t)
	// The port is chosen first: the endpoint's URL is the tokens' audience.
	port := strconv.Itoa(freePort(t))
	origin := "http://127.0.0.1:" + port
	endpoint := origin + "/mcp"
	as := startAuthServer(t, endpoint)

	const refetch = 3 * time.Second
	cmd := exec.Command(binary, "launch", "--headless", "--http", "127.0.0.1:"+port,
		"--oauth-issuer", as.Issuer, "--oauth-clock-skew", "0s", "--oauth-jwks-refetch-interval", refetch.String(),
		"--oauth-introspection-client-id", "webmcp", "--oauth-introspection-client-secret", "webmcp-secret",
		"--oauth-introspection-cache", "0s", base+"/notes/")
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+t.TempDir())
	spot := &urlSpotter{re: regexp.MustCompile(`url=(http://\S+/mcp)`), found: make(chan string, 1)}
	logs := &syncBuffer{} // its stderr again, to wait for a log line
	cmd.Stdout, cmd.Stderr = io.Discard, io.MultiWriter(spot, logs)
	if _, err := cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("webmcp-cdp stderr:\n%s", spot.String())
		}
	})
	select {
	case u := <-spot.found:
		if u != endpoint {
			t.Fatalf("webmcp-cdp serves %s, want %s", u, endpoint)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("webmcp-cdp did not start serving HTTP:\n%s", spot.String())
	}
	metaURL := origin + "/.well-known/oauth-protected-resource/mcp"
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"0"}}}`
	claims := func() jwt.MapClaims {
		now := time.Now()
		return jwt.MapClaims{"iss": as.Issuer, "sub": "mallory", "client_id": "agent", "aud": endpoint, "scope": "webmcp:read webmcp:call", "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
	}
	var addNote string // the notes page's add_note, once listed

	t.Run("no token: the spec's 401 and the metadata", func(t *testing.T) {
		status, challenge, _ := rawPost(t, endpoint, "", initialize)
		want := `Bearer resource_metadata="` + metaURL + `", scope="webmcp:read"`
		if status != http.StatusUnauthorized || challenge != want {
			t.Fatalf("POST without a token: %d, WWW-Authenticate %q; want 401, %q", status, challenge, want)
		}
		for _, u := range []string{metaURL, origin + "/.well-known/oauth-protected-resource"} {
			resp, err := http.Get(u)
			if err != nil {
				t.Fatal(err)
			}
			var meta oauthex.ProtectedResourceMetadata
			err = json.NewDecoder(resp.Body).Decode(&meta)
			resp.Body.Close()
			if err != nil || meta.Resource != endpoint || len(meta.AuthorizationServers) != 1 || meta.AuthorizationServers[0] != as.Issuer ||
				strings.Join(meta.BearerMethodsSupported, " ") != "header" || strings.Join(meta.ScopesSupported, " ") != "webmcp:read webmcp:call" {
				t.Fatalf("%s: %+v %v", u, meta, err)
			}
		}
		resp, err := http.Get(origin + "/")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("the status page without a token: %s, want 401", resp.Status)
		}
	})

	t.Run("the go-sdk's OAuth client lists, steps up and calls", func(t *testing.T) {
		h, err := extauth.NewClientCredentialsHandler(&extauth.ClientCredentialsHandlerConfig{
			Credentials: &oauthex.ClientCredentials{ClientID: "agent", ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: "agent-secret"}},
		})
		if err != nil {
			t.Fatal(err)
		}
		c, err := mcpClient(t, endpoint, nil, h)
		if err != nil {
			t.Fatalf("connecting with the client credentials flow: %v", err)
		}
		tools := c.waitFor("the notes page's tools", hasSuffix("add_note", 1))
		addNote = toolWithSuffix(tools, "add_note")[0]
		// The first token has webmcp:read (the 401 asked for it); the call
		// gets 403 insufficient_scope, and the client steps up.
		if got := c.callOK(addNote, map[string]any{"title": "oauth", "content": "via a real authorization server"}); !strings.HasPrefix(got, "Added note #") {
			t.Fatalf("add_note = %q", got)
		}
		if got := c.callOK("webmcp_list_tabs", map[string]any{}); !strings.Contains(got, "/notes/") {
			t.Errorf("webmcp_list_tabs = %q", got)
		}
		// The log comes through a pipe: wait for the lines, then read them.
		logs.waitFor("status=403", 5*time.Second)
		logs.waitFor(`op="tools/call `+addNote+`"`, 5*time.Second)
		logs := logs.String()
		if !regexp.MustCompile(`refused an OAuth request.*status=403.*needs the scope webmcp:call.*client_id=agent`).MatchString(logs) {
			t.Errorf("no 403 before the step-up in the log:\n%s", logs)
		}
		if !regexp.MustCompile(`OAuth request let in.*op="tools/call ` + regexp.QuoteMeta(addNote) + `".*client_id=agent`).MatchString(logs) {
			t.Errorf("the call's client id is not in the log:\n%s", logs)
		}
		if strings.Contains(logs, "eyJ") {
			t.Error("a token is in the log")
		}
		// The status page's last calls name the caller (fed by a watcher:
		// looked at again for up to 5 s). Each person sees their own space's
		// page (--isolate user, the default with --oauth-issuer): the agent's.
		read := as.token(t, as.Issuer, "agent", "webmcp:read", "")
		// Poll interval: the watcher that feeds the call log tells no one.
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			req, _ := http.NewRequest(http.MethodGet, origin+"/", nil)
			req.Header.Set("Authorization", "Bearer "+read)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			page, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && strings.Contains(string(page), "<code>"+addNote+"</code> <span class=\"muted\">by agent</span>") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the status page (%s) does not name the caller of %s:\n%s", resp.Status, addNote, page)
			}
		}
	})
	if addNote == "" {
		t.Fatal("the notes page's tools were not listed")
	}
	callNote := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"` + addNote + `","arguments":{"title":"x","content":"y"}}}`

	t.Run("a read-only token lists and reads, and gets 403 naming the scope for a call", func(t *testing.T) {
		tok := as.token(t, as.Issuer, "reader", "webmcp:read", "")
		c, err := mcpClient(t, endpoint, &http.Client{Transport: bearer{token: tok, next: http.DefaultTransport}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		c.waitFor("the notes page's tools", hasSuffix("add_note", 1))
		c.callOK("webmcp_list_tools", map[string]any{"query": "note"})
		status, challenge, _ := rawPost(t, endpoint, "Bearer "+tok, callNote)
		if status != http.StatusForbidden || !strings.Contains(challenge, `error="insufficient_scope"`) || !strings.Contains(challenge, `scope="webmcp:call"`) ||
			!strings.Contains(challenge, `resource_metadata="`+metaURL+`"`) {
			t.Fatalf("a call with a read-only token: %d, %q", status, challenge)
		}
		if _, err := c.cs.CallTool(t.Context(), &mcp.CallToolParams{Name: addNote, Arguments: map[string]any{"title": "x", "content": "y"}}); err == nil {
			t.Fatal("the go-sdk client called a page tool with a read-only token")
		}
	})

	// The JWKS as the issuer publishes it, for the tokens an attacker forges.
	resp, err := http.Get(as.Issuer + "/jwks")
	if err != nil {
		t.Fatal(err)
	}
	var jwks jose.JSONWebKeySet
	err = json.NewDecoder(resp.Body).Decode(&jwks)
	resp.Body.Close()
	if err != nil || len(jwks.Keys) == 0 {
		t.Fatalf("the issuer's JWKS: %v", err)
	}
	pub, err := x509.MarshalPKIXPublicKey(jwks.Keys[0].Key)
	if err != nil {
		t.Fatal(err)
	}
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})
	evil, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	none, err := jwt.NewWithClaims(jwt.SigningMethodNone, claims()).SignedString(jwt.UnsafeAllowNoneSignatureType)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("refused tokens get 401 invalid_token", func(t *testing.T) {
		for _, tt := range []struct {
			name, token, reason string
		}{
			{"wrong audience", as.token(t, as.Issuer, "agent", "webmcp:read", "http://127.0.0.1:1/other"), "not for this resource"},
			{"wrong issuer", as.token(t, as.Foreign, "agent", "webmcp:read", endpoint), "not one this server trusts"},
			{"alg none", none, "algorithm is not allowed"},
			{"HS256 signed with the issuer's public key", forge(t, jwt.SigningMethodHS256, pubPEM, jwks.Keys[0].KeyID, claims()), "algorithm is not allowed"},
			{"signed with another key under the issuer's kid", forge(t, jwt.SigningMethodRS256, evil, jwks.Keys[0].KeyID, claims()), "signature does not verify"},
			{"garbage", "not-a-token", "not active"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				status, challenge, body := rawPost(t, endpoint, "Bearer "+tt.token, initialize)
				if status != http.StatusUnauthorized || !strings.HasPrefix(challenge, `Bearer resource_metadata="`+metaURL+`", error="invalid_token"`) || !strings.Contains(body, tt.reason) {
					t.Fatalf("%d, WWW-Authenticate %q, body %q; want 401 invalid_token, %q", status, challenge, body, tt.reason)
				}
			})
		}
	})

	t.Run("expired", func(t *testing.T) {
		tok := as.token(t, as.Issuer, "short", "webmcp:read", "")
		if status, _, body := rawPost(t, endpoint, "Bearer "+tok, initialize); status != http.StatusOK {
			t.Fatalf("a fresh short-lived token: %d %s", status, body)
		}
		// Wait out its lifetime (2 s, no skew): a wait for the clock, as
		// the token's expiry is what is tested; no event stands for it.
		time.Sleep(time.Until(expiry(t, tok).Add(time.Second)))
		status, challenge, body := rawPost(t, endpoint, "Bearer "+tok, initialize)
		if status != http.StatusUnauthorized || !strings.Contains(challenge, `error="invalid_token"`) || !strings.Contains(body, "has expired") {
			t.Fatalf("an expired token: %d %q %q", status, challenge, body)
		}
	})

	t.Run("token in the query string", func(t *testing.T) {
		tok := as.token(t, as.Issuer, "agent", "webmcp:read", "")
		status, challenge, _ := rawPost(t, endpoint+"?access_token="+tok, "", initialize)
		if status != http.StatusBadRequest || !strings.Contains(challenge, `error="invalid_request"`) {
			t.Fatalf("a token in the query: %d %q", status, challenge)
		}
	})

	t.Run("opaque token: introspected, then revoked", func(t *testing.T) {
		tok := as.token(t, as.Issuer, "opaque", "webmcp:read webmcp:call", "")
		c, err := mcpClient(t, endpoint, &http.Client{Transport: bearer{token: tok, next: http.DefaultTransport}}, nil)
		if err != nil {
			t.Fatalf("connecting with an opaque token: %v", err)
		}
		c.waitFor("the notes page's tools", hasSuffix("add_note", 1))
		resp, err := postForm(as.Issuer+"/token/revocation", url.Values{"token": {tok}, "client_id": {"opaque"}, "client_secret": {"opaque-secret"}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("revoking: %s", resp.Status)
		}
		status, challenge, body := rawPost(t, endpoint, "Bearer "+tok, initialize)
		if status != http.StatusUnauthorized || !strings.Contains(challenge, `error="invalid_token"`) || !strings.Contains(body, "not active") {
			t.Fatalf("a revoked opaque token: %d %q %q", status, challenge, body)
		}
	})

	var refetched time.Time
	t.Run("unknown kid: one JWKS refetch, then refused", func(t *testing.T) {
		before := as.jwksFetches(t)
		for i, kid := range []string{"forged-1", "forged-2"} {
			status, challenge, body := rawPost(t, endpoint, "Bearer "+forge(t, jwt.SigningMethodRS256, evil, kid, claims()), initialize)
			if i == 0 {
				refetched = time.Now()
			}
			if status != http.StatusUnauthorized || !strings.Contains(challenge, `error="invalid_token"`) || !strings.Contains(body, `"`+kid+`" is not among`) {
				t.Fatalf("kid %s: %d %q %q", kid, status, challenge, body)
			}
		}
		if got := as.jwksFetches(t) - before; got != 1 {
			t.Fatalf("the JWKS was fetched %d times for two unknown kids within %s, want 1", got, refetch)
		}
	})

	t.Run("the issuer stops: cached keys go on, new kids fail closed", func(t *testing.T) {
		tok := as.token(t, as.Issuer, "agent", "webmcp:read webmcp:call", "") // not used before
		as.stop()
		c, err := mcpClient(t, endpoint, &http.Client{Transport: bearer{token: tok, next: http.DefaultTransport}}, nil)
		if err != nil {
			t.Fatalf("a valid token with the issuer stopped: %v", err)
		}
		if got := c.callOK(addNote, map[string]any{"title": "offline", "content": "issuer down"}); !strings.HasPrefix(got, "Added note #") {
			t.Fatalf("add_note = %q", got)
		}
		// Past the refetch interval, a new kid makes webmcp-cdp try the
		// issuer, which is gone: refused, and said in the log. A wait for
		// the clock: the interval passing is what is tested.
		time.Sleep(time.Until(refetched.Add(refetch + 200*time.Millisecond)))
		status, _, body := rawPost(t, endpoint, "Bearer "+forge(t, jwt.SigningMethodRS256, evil, "after-stop", claims()), initialize)
		if status != http.StatusUnauthorized || !strings.Contains(body, "could not be read again") {
			t.Fatalf("a new kid with the issuer stopped: %d %q", status, body)
		}
		if !logs.waitFor("cannot read the OAuth issuer's keys again", 5*time.Second) {
			t.Fatal("no log line about the issuer's keys")
		}
	})
}
