package relay

import (
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// testSecret signs the tokens of the tests.
const testSecret = "0123456789abcdef0123456789abcdef-test-secret"

func testAuth(t testing.TB) *HS256 {
	t.Helper()
	a, err := NewHS256([]byte(testSecret))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// harness is a proxy on a test HTTP server. The proxy's own tests have a
// fuller one (proxy/harness_test.go) that speaks the protocol by hand.
type harness struct {
	t    testing.TB
	srv  *Server
	http *httptest.Server
	auth *HS256
}

func newHarness(t testing.TB, mod func(*ServerOptions)) *harness {
	t.Helper()
	auth := testAuth(t)
	opts := ServerOptions{Auth: auth, Logger: quietLogger()}
	if mod != nil {
		mod(&opts)
	}
	srv, err := NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		srv.Close()
		hs.Close()
	})
	return &harness{t: t, srv: srv, http: hs, auth: auth}
}

func (h *harness) url(path string) string {
	return "ws" + strings.TrimPrefix(h.http.URL, "http") + path
}

func (h *harness) token(user string) string {
	h.t.Helper()
	tok, err := h.auth.Issue(user, time.Hour)
	if err != nil {
		h.t.Fatal(err)
	}
	return tok
}
