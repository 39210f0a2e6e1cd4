package e2e

import (
	"context"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The secrets of the authenticating proxy: distinctive, so that finding
// them in a log is never a coincidence.
const (
	proxyBearer = "s3cret-Hq7"
	proxyToken  = "abc-Zr4"
)

// authProxy is a loopback reverse proxy in front of a browser's debugging
// port, as a browser service is: it answers 401 unless the request has
// "Authorization: Bearer <proxyBearer>" and ?token=<proxyToken>, and
// forwards to the browser with the browser's own Host, so /json/version
// names the browser's internal address, not the proxy's.
type authProxy struct {
	srv      *httptest.Server
	upgrades atomic.Int32 // WebSocket upgrades let through
}

func startAuthProxy(t *testing.T, browserURL string, tls bool) *authProxy {
	t.Helper()
	target, err := url.Parse(browserURL)
	if err != nil {
		t.Fatal(err)
	}
	p := &authProxy{}
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target) // and the browser's Host
		q := r.Out.URL.Query()
		q.Del("token")
		r.Out.URL.RawQuery = q.Encode()
		r.Out.Header.Del("Authorization")
	}}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+proxyBearer || r.URL.Query().Get("token") != proxyToken {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		if strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
			p.upgrades.Add(1)
		}
		rp.ServeHTTP(w, r)
	})
	if tls {
		p.srv = httptest.NewTLSServer(h)
	} else {
		p.srv = httptest.NewServer(h)
	}
	t.Cleanup(p.srv.Close)
	return p
}

// TestAttachThroughAuthProxy: attach reaches a real Chromium behind an
// authenticating proxy with --header and a token in --browser-url (over
// plain HTTP, and over TLS with --ca-file); the MCP client lists and calls
// a page's tool through it; the WebSocket goes through the proxy although
// /json/version names the browser's own address; and the log at debug level
// shows neither secret.
func TestAttachThroughAuthProxy(t *testing.T) {
	t.Parallel()
	base := serveFixtures(t)
	browserURL := startChrome(t, "about:blank")
	for _, tc := range []struct {
		name string
		tls  bool
		env  bool // the header from WEBMCP_CDP_HEADER, not the command line
	}{
		{name: "http, --header"},
		{name: "http, header from the environment", env: true},
		{name: "https, --ca-file", tls: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startAuthProxy(t, browserURL, tc.tls)
			args := []string{"attach", "--log-level", "debug", "--state-dir", "", "--browser-url", p.srv.URL + "/?token=" + proxyToken}
			var env []string
			if tc.env {
				env = []string{"WEBMCP_CDP_HEADER=Authorization: Bearer " + proxyBearer}
			} else {
				args = append(args, "--header", "Authorization: Bearer "+proxyBearer)
			}
			if tc.tls {
				args = append(args, "--ca-file", writeCA(t, p.srv))
			}
			c := startEnv(t, env, append(args, base+"/current/")...)
			tools := c.waitFor("the page's tools through the proxy", hasSuffix("echo", 1))
			if got := c.callOK(toolWithSuffix(tools, "echo")[0], map[string]any{"text": "via proxy"}); got != "via proxy" {
				t.Errorf("echo = %q", got)
			}
			if n := p.upgrades.Load(); n != 1 {
				t.Errorf("the proxy let %d WebSocket upgrades through, want 1: the WebSocket URL must name the proxy, not the browser's own address", n)
			}
			if !c.stderr.waitFor("attached to the browser", 5*time.Second) {
				t.Fatal("no \"attached to the browser\" line")
			}
			c.cs.Close()
			log := c.stderr.String()
			for _, secret := range []string{proxyBearer, proxyToken} {
				if strings.Contains(log, secret) {
					t.Errorf("the log shows the secret %q:\n%s", secret, log)
				}
			}
			if !strings.Contains(log, "token=REDACTED") {
				t.Errorf("the log does not show the endpoint with its token redacted:\n%s", log)
			}
		})
	}
}

// TestAttachRefusedByProxy: without the header, or with TLS but no
// --ca-file, attach exits at once with an error that says why and what to
// pass, and shows no secret.
func TestAttachRefusedByProxy(t *testing.T) {
	t.Parallel()
	browserURL := startChrome(t, "about:blank")
	plain := startAuthProxy(t, browserURL, false)
	secure := startAuthProxy(t, browserURL, true)
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{
			name: "no header",
			args: []string{"--browser-url", plain.srv.URL + "/?token=" + proxyToken},
			want: []string{"refused the connection (401 Unauthorized)", "check --header"},
		},
		{
			name: "wrong header",
			args: []string{"--browser-url", plain.srv.URL + "/?token=" + proxyToken, "--header", "Authorization: Bearer not-" + proxyBearer},
			want: []string{"refused the connection (401 Unauthorized)", "check --header"},
		},
		{
			name: "no --ca-file",
			args: []string{"--browser-url", secure.srv.URL + "/?token=" + proxyToken, "--header", "Authorization: Bearer " + proxyBearer},
			want: []string{"certificate", "--ca-file"},
		},
		{
			name: "bad header",
			args: []string{"--browser-url", plain.srv.URL, "--header", "Bearer " + proxyBearer},
			want: []string{"--header #1 has no colon"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, binary, append([]string{"attach", "--log-level", "debug", "--state-dir", ""}, tc.args...)...)
			out, err := cmd.CombinedOutput()
			if ctx.Err() != nil {
				t.Fatalf("attach did not exit:\n%s", out)
			}
			if _, ok := errors.AsType[*exec.ExitError](err); !ok {
				t.Fatalf("attach exited with %v, want a failure:\n%s", err, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("the output does not say %q:\n%s", w, out)
				}
			}
			for _, secret := range []string{proxyBearer, proxyToken} {
				if strings.Contains(string(out), secret) {
					t.Errorf("the output shows the secret %q:\n%s", secret, out)
				}
			}
		})
	}
	if n := plain.upgrades.Load() + secure.upgrades.Load(); n != 0 {
		t.Errorf("%d WebSocket upgrades got through", n)
	}
}

// writeCA writes the TLS server's certificate as a PEM file for --ca-file.
func writeCA(t *testing.T, srv *httptest.Server) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
