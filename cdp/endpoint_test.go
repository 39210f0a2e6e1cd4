package cdp

import (
	"context"
	"encoding/pem"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// checkErr fails t unless err is nil when want is empty, or holds want;
// it reports whether an error was wanted.
func checkErr(t *testing.T, err error, want string) bool {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatal(err)
		}
		return false
	}
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v, want one with %q", err, want)
	}
	return true
}

func TestParseHeaders(t *testing.T) {
	for _, tc := range []struct {
		name    string
		lines   []string
		want    http.Header
		wantErr string
	}{
		{name: "none", lines: nil, want: http.Header{}},
		{name: "one", lines: []string{"Authorization: Bearer s3cret"}, want: http.Header{"Authorization": {"Bearer s3cret"}}},
		{name: "spaces trimmed, name canonical", lines: []string{"  x-api-key :  k1  "}, want: http.Header{"X-Api-Key": {"k1"}}},
		{name: "repeated", lines: []string{"X-A: 1", "X-A: 2", "X-B: a:b"}, want: http.Header{"X-A": {"1", "2"}, "X-B": {"a:b"}}},
		{name: "no colon", lines: []string{"Bearer s3cret"}, wantErr: "--header #1 has no colon"},
		{name: "empty name", lines: []string{": v"}, wantErr: "is not a header name"},
		{name: "space in name", lines: []string{"X Api: v"}, wantErr: `"X Api" is not a header name`},
		{name: "empty value", lines: []string{"Authorization:"}, wantErr: "--header Authorization has no value"},
		{name: "line break", lines: []string{"X-A: s3cret\r\nEvil: 1"}, wantErr: "line break"},
		{name: "host", lines: []string{"Host: other"}, wantErr: "sets this header itself"},
		{name: "websocket key", lines: []string{"sec-websocket-key: x"}, wantErr: "sets this header itself"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseHeaders(tc.lines)
			if checkErr(t, err, tc.wantErr) {
				if strings.Contains(err.Error(), "s3cret") {
					t.Errorf("the error shows the header's value: %v", err)
				}
				return
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRedactURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"http://127.0.0.1:9222", "http://127.0.0.1:9222"},
		{"wss://host/?token=abc", "wss://host/?token=REDACTED"},
		{"wss://host/chromium?token=abc&stealth=true", "wss://host/chromium?stealth=true&token=REDACTED"},
		{"ws://h/devtools/browser/x?apiKey=a&key=b&auth=c&access_token=d&api_key=e&Password=f", "ws://h/devtools/browser/x?Password=REDACTED&access_token=REDACTED&apiKey=REDACTED&api_key=REDACTED&auth=REDACTED&key=REDACTED"},
		{"https://user:pw@host:443/x", "https://REDACTED@host:443/x"},
		{"https://tokenonly@host/", "https://REDACTED@host/"},
		{"http://h/?token=abc#frag", "http://h/?token=REDACTED"},
		{"http://h/?token=%zz", "http://h/?REDACTED"},
		{"://bad", "(an endpoint URL that does not parse)"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			if got := RedactURL(tc.in); got != tc.want {
				t.Errorf("RedactURL(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestWSFromVersion(t *testing.T) {
	for _, tc := range []struct {
		name, given, returned, want, wantErr string
	}{
		{name: "same host", given: "http://127.0.0.1:9222", returned: "ws://127.0.0.1:9222/devtools/browser/b1", want: "ws://127.0.0.1:9222/devtools/browser/b1"},
		{name: "internal host rewritten", given: "http://proxy.test:8080", returned: "ws://10.0.0.5:9222/devtools/browser/b1", want: "ws://proxy.test:8080/devtools/browser/b1"},
		{name: "token kept", given: "http://proxy.test/?token=abc", returned: "ws://127.0.0.1:9222/devtools/browser/b1", want: "ws://proxy.test/devtools/browser/b1?token=abc"},
		{name: "https makes wss", given: "https://svc.test/?token=abc", returned: "ws://svc.test/devtools/browser/b1", want: "wss://svc.test/devtools/browser/b1?token=abc"},
		{name: "path prefix added for another host", given: "https://svc.test/chrome/?token=abc", returned: "ws://10.0.0.5:9222/devtools/browser/b1", want: "wss://svc.test/chrome/devtools/browser/b1?token=abc"},
		{name: "path prefix not doubled", given: "https://svc.test/chrome", returned: "ws://10.0.0.5/chrome/devtools/browser/b1", want: "wss://svc.test/chrome/devtools/browser/b1"},
		{name: "returned query wins", given: "http://svc.test/?token=mine&x=1", returned: "ws://svc.test/devtools/browser/b1?token=session", want: "ws://svc.test/devtools/browser/b1?token=session&x=1"},
		{name: "host compared without case", given: "http://LOCALHOST:9222", returned: "ws://localhost:9222/devtools/browser/b1", want: "ws://localhost:9222/devtools/browser/b1"},
		{name: "not ws", given: "http://h", returned: "http://h/devtools/browser/b1?token=abc", wantErr: "not a ws:// URL: http://h/devtools/browser/b1?token=REDACTED"},
		{name: "no host", given: "http://h", returned: "ws:///x", wantErr: "not a ws:// URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			given, err := url.Parse(tc.given)
			if err != nil {
				t.Fatal(err)
			}
			got, err := wsFromVersion(given, tc.returned)
			if checkErr(t, err, tc.wantErr) {
				return
			}
			if got.String() != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestTLSConfigWithCA(t *testing.T) {
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	defer srv.Close()
	dir := t.TempDir()
	good := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(good, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.pem")
	if err := os.WriteFile(bad, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, file, wantErr string }{
		{name: "a PEM certificate", file: good},
		{name: "no PEM", file: bad, wantErr: "holds no PEM certificate"},
		{name: "missing", file: filepath.Join(dir, "none.pem"), wantErr: "--ca-file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := TLSConfigWithCA(tc.file)
			if checkErr(t, err, tc.wantErr) {
				return
			}
			// The configuration trusts the server's certificate.
			resp, err := endpointClient(Endpoint{TLS: cfg}).Get(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		})
	}
}

// TestAttachErrorsHideSecrets checks the errors of an endpoint that
// refuses, answers nonsense or is not there: they say what to do, and show
// neither the URL's token nor a header's value.
func TestAttachErrorsHideSecrets(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Header.Get("Authorization") != "Bearer s3cret":
			http.Error(w, "no", http.StatusUnauthorized)
		case r.URL.Path == "/json/version":
			fmt.Fprint(w, `{"Browser":"x"}`)
		default:
			http.Error(w, "no", http.StatusForbidden)
		}
	}))
	defer srv.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	auth := http.Header{"Authorization": {"Bearer s3cret"}}
	for _, tc := range []struct {
		name    string
		ep      Endpoint
		wantErr string
	}{
		{name: "json/version refused", ep: Endpoint{BrowserURL: srv.URL + "/?token=abc"}, wantErr: "refused the connection (401 Unauthorized)"},
		{name: "upgrade refused", ep: Endpoint{WSEndpoint: "ws" + strings.TrimPrefix(srv.URL, "http") + "/devtools/browser/b?token=abc", Header: auth}, wantErr: "refused the connection (403 Forbidden): the endpoint needs credentials; check --header"},
		{name: "no webSocketDebuggerUrl", ep: Endpoint{BrowserURL: srv.URL + "/?token=abc", Header: auth}, wantErr: "did not give a webSocketDebuggerUrl"},
		{name: "nothing listening", ep: Endpoint{BrowserURL: closed.URL + "/?token=abc", Header: auth}, wantErr: "is Chrome running with --remote-debugging-port?"},
		{name: "not http", ep: Endpoint{BrowserURL: "ftp://u:abc@h/"}, wantErr: "is not an http:// URL such as"},
		{name: "not ws", ep: Endpoint{WSEndpoint: "http://h/?token=abc"}, wantErr: "--ws-endpoint http://h/?token=REDACTED is not a ws://"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conn, err := Attach(context.Background(), tc.ep, slog.New(slog.DiscardHandler))
			if err == nil {
				conn.Close()
				t.Fatal("attached")
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %q, want one with %q", err, tc.wantErr)
			}
			for _, secret := range []string{"abc", "s3cret"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("the error shows %q: %v", secret, err)
				}
			}
		})
	}
}
