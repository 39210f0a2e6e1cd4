package browsers

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeGrid answers WebDriver requests as a Selenium Grid would (unit tests
// only; e2e/grid_test.go runs the real one).
type fakeGrid struct {
	mu      sync.Mutex
	calls   []string // "METHOD path"
	headers []http.Header
	answer  func(method, path string) (int, string)
}

func (f *fakeGrid) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.calls = append(f.calls, r.Method+" "+r.URL.Path)
	f.headers = append(f.headers, r.Header.Clone())
	f.mu.Unlock()
	code, body := f.answer(r.Method, r.URL.Path)
	w.WriteHeader(code)
	w.Write([]byte(body))
}

func (f *fakeGrid) called() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func newFakeGrid(t *testing.T, answer func(method, path string) (int, string)) (*fakeGrid, *Grid) {
	f := &fakeGrid{answer: answer}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL + "/wd/hub")
	return f, NewGrid(GridOptions{URL: u, Header: http.Header{"Authorization": {"Basic c2VjcmV0"}}, Tag: Tag{Host: "h", PID: 7, Started: time.Unix(1e9, 0).UTC()}})
}

func TestGridCapabilities(t *testing.T) {
	_, g := newFakeGrid(t, nil)
	g.opts.Args = []string{"--disable-popup-blocking", "--lang=de"}
	g.opts.Capabilities = map[string]any{
		"browserName":        "chrome",
		"platformName":       "linux",
		"goog:chromeOptions": map[string]any{"binary": "/opt/chrome", "args": []any{"--mine"}},
	}
	caps := g.capabilities()
	b, _ := json.Marshal(caps)
	for _, want := range []string{`"platformName":"linux"`, `"binary":"/opt/chrome"`, `"args":["--disable-popup-blocking","--lang=de","--mine"]`, `"webmcp-cdp:owner":{"host":"h","pid":7`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("capabilities %s lack %s", b, want)
		}
	}
	if _, ok := g.opts.Capabilities["goog:chromeOptions"].(map[string]any)["args"].([]any); !ok || len(g.opts.Capabilities["goog:chromeOptions"].(map[string]any)["args"].([]any)) != 1 {
		t.Error("capabilities() changed the caller's map")
	}
}

func TestGridErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		code int
		body string
		want []string
	}{
		{"credentials", 401, "", []string{"said 401 Unauthorized", "check the credentials in SELENIUM_REMOTE_HEADERS"}},
		{"no slot", 500, `{"value":{"error":"session not created","message":"Could not start a new session. New session request timed out \nHost info: x\nBuild info: y"}}`, []string{"said 500 session not created: Could not start a new session. New session request timed out: the Grid found no free slot"}},
		{"unsupported", 500, `{"value":{"error":"session not created","message":"Could not start a new session. No nodes support the capabilities in the request"}}`, []string{"No nodes support the capabilities in the request: check SELENIUM_REMOTE_CAPABILITIES"}},
		{"not a grid", 200, `<html>`, []string{"with no WebDriver JSON: is this a Selenium Grid?"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, g := newFakeGrid(t, func(string, string) (int, string) { return tc.code, tc.body })
			_, err := g.Start(context.Background())
			if err == nil {
				t.Fatal("Start succeeded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "c2VjcmV0") || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q holds the credentials or a line break", err)
			}
		})
	}
}

func TestGridCDPURL(t *testing.T) {
	_, g := newFakeGrid(t, nil)
	got, err := g.cdpURL(map[string]any{"se:cdp": "ws://192.0.2.2:4444/session/abc/se/cdp"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "ws://" + g.opts.URL.Host + "/wd/hub/session/abc/se/cdp"; got != want {
		t.Errorf("cdpURL = %s, want %s (the Grid URL given, not the address the Grid believes it has)", got, want)
	}
	if _, err := g.cdpURL(map[string]any{}); err == nil || !strings.Contains(err.Error(), "no CDP endpoint (se:cdp)") {
		t.Errorf("without se:cdp: %v", err)
	}
}

// TestGridKeepAlive: the keep-alive command goes to the session, a session
// the Grid no longer has closes Gone with the Grid's reason, and End
// deletes the session (once).
func TestGridKeepAlive(t *testing.T) {
	var mu sync.Mutex
	alive := true
	f, g := newFakeGrid(t, func(method, path string) (int, string) {
		mu.Lock()
		defer mu.Unlock()
		if method == "GET" && path == "/wd/hub/session/s1/timeouts" && alive {
			return 200, `{"value":{"implicit":0}}`
		}
		return 404, `{"value":{"error":"invalid session id","message":"Unable to find session with ID: s1. reason: session timed out due to inactivity"}}`
	})
	s := &gridSession{g: g, id: "s1", gone: make(chan struct{}), stop: make(chan struct{})}
	go s.keepAlive(10 * time.Millisecond)
	// Three answered keep-alives, and the session is not gone.
	for n := 0; n < 3; {
		n = 0
		for _, c := range f.called() {
			if c == "GET /wd/hub/session/s1/timeouts" {
				n++
			}
		}
		runtime.Gosched()
	}
	select {
	case <-s.gone:
		t.Fatal("gone while the Grid has the session")
	default:
	}
	mu.Lock()
	alive = false
	mu.Unlock()
	select {
	case <-s.gone:
	case <-time.After(5 * time.Second):
		t.Fatal("not gone once the Grid lost the session")
	}
	if r := s.reason(); !strings.Contains(r, "the Grid ended session s1") || !strings.Contains(r, "timed out due to inactivity") {
		t.Errorf("reason %q", r)
	}
	if err := s.end(context.Background()); err != nil {
		t.Errorf("ending a session the Grid no longer has: %v", err)
	}
	s.end(context.Background())
	var deletes int
	for _, c := range f.called() {
		if c == "DELETE /wd/hub/session/s1" {
			deletes++
		}
	}
	if deletes != 1 {
		t.Errorf("%d DELETEs, want 1: %v", deletes, f.called())
	}
	for _, h := range f.headers {
		if h.Get("Authorization") != "Basic c2VjcmV0" {
			t.Fatalf("a request without the header: %v", h)
		}
	}
}

// TestGridKeepAliveUnreachable: a Grid that stops answering loses the
// session after a few tries, not at the first.
func TestGridKeepAliveUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	u, _ := url.Parse(srv.URL)
	srv.Close()
	s := &gridSession{g: NewGrid(GridOptions{URL: u}), id: "s1", gone: make(chan struct{}), stop: make(chan struct{})}
	go s.keepAlive(time.Millisecond)
	select {
	case <-s.gone:
	case <-time.After(10 * time.Second):
		t.Fatal("not gone with the Grid down")
	}
	if r := s.reason(); !strings.Contains(r, "did not answer 3 keep-alive commands") {
		t.Errorf("reason %q", r)
	}
}

func TestGridLeftoversAndKeepAlivePeriod(t *testing.T) {
	status := `{"value":{"ready":true,"nodes":[
	 {"uri":"http://n1","sessionTimeout":30000,"slots":[
	  {"session":{"sessionId":"old","capabilities":{"webmcp-cdp:owner":{"host":"h","pid":3,"started":"2026-11-28T10:00:00Z"}}}},
	  {"session":{"sessionId":"mine","capabilities":{"webmcp-cdp:owner":{"host":"h","pid":7,"started":"2001-09-09T01:46:40Z"}}}}]},
	 {"uri":"http://n2","sessionTimeout":12000,"slots":[
	  {"session":{"sessionId":"other","capabilities":{"browserName":"chrome"}}},
	  {"session":null}]}]}}`
	_, g := newFakeGrid(t, func(string, string) (int, string) { return 200, status })
	left, err := g.Leftovers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 1 || left[0].ID != "old" || left[0].Node != "http://n1" || !strings.Contains(left[0].String(), "pid 3 on h") {
		t.Errorf("Leftovers = %v, want the session of pid 3 only", left)
	}
	if d, err := g.keepAlivePeriod(context.Background()); err != nil || d != 4*time.Second {
		t.Errorf("keepAlivePeriod = %s, %v; want a third of the shortest timeout, 4s", d, err)
	}
}
