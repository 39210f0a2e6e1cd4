package cdp

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// portOf returns the port of a test server's URL.
func portOf(t *testing.T, raw string) int {
	t.Helper()
	_, p, err := net.SplitHostPort(strings.TrimPrefix(raw, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(p)
	return n
}

func TestAutoConnect(t *testing.T) {
	// A server that holds the upgrade (the Allow dialog) until hold ends,
	// then accepts, or refuses with 403 when refuse is set.
	server := func(hold <-chan struct{}, refuse bool, plainHTTP *atomic.Int32) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Upgrade") == "" {
				plainHTTP.Add(1)
				http.NotFound(w, r)
				return
			}
			select {
			case <-hold:
			case <-r.Context().Done():
				return
			}
			if refuse {
				http.Error(w, "refused", http.StatusForbidden)
				return
			}
			c, err := websocket.Accept(w, r, nil)
			if err != nil {
				return
			}
			c.CloseRead(context.Background())
			<-r.Context().Done()
			c.CloseNow()
		}))
	}
	closedPort := func() int {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		l.Close()
		return p
	}
	// The dialog is held on events, not clocks: "at once" is not held at
	// all (and its notice, a minute away, must not come); "clicked" and
	// "refused" are held until the notice came, as a person clicks after
	// reading it; "nobody clicks" is held past the timeout.
	const (
		atOnce = iota
		afterNotice
		never
	)
	tests := []struct {
		name     string
		hold     int
		refuse   bool
		closed   bool
		notice   time.Duration
		timeout  time.Duration
		wantWait bool
		wantErr  []string
	}{
		{name: "allowed at once", hold: atOnce, notice: time.Minute},
		{name: "allowed after the person clicked", hold: afterNotice, wantWait: true},
		{name: "refused", hold: afterNotice, refuse: true, wantWait: true, wantErr: []string{"did not let us connect", "/p/DevToolsActivePort", "chrome://inspect/#remote-debugging"}},
		{name: "nobody clicks", hold: never, timeout: 500 * time.Millisecond, wantWait: true, wantErr: []string{"nobody clicked Allow", "500ms", "/p/DevToolsActivePort", "--connect-timeout"}},
		{name: "stale port", closed: true, wantErr: []string{"nothing listens", "/p/DevToolsActivePort", "chrome://inspect/#remote-debugging"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var plain atomic.Int32
			var waits atomic.Int32
			noticed := make(chan struct{})
			var once sync.Once
			port := 0
			if tt.closed {
				port = closedPort()
			} else {
				hold := make(chan struct{})
				switch tt.hold {
				case atOnce:
					close(hold)
				case afterNotice:
					hold = noticed
				}
				srv := server(hold, tt.refuse, &plain)
				defer srv.Close()
				port = portOf(t, srv.URL)
			}
			notice := tt.notice
			if notice == 0 {
				notice = 100 * time.Millisecond
			}
			ap := ActivePort{File: "/p/DevToolsActivePort", Port: port, Path: "/devtools/browser/x"}
			start := time.Now()
			conn, err := AutoConnect(t.Context(), ap, AutoConnectOptions{
				Timeout:    tt.timeout,
				WaitNotice: notice,
				OnWait:     func() { waits.Add(1); once.Do(func() { close(noticed) }) },
			})
			took := time.Since(start)
			if plain.Load() != 0 {
				t.Errorf("%d plain HTTP requests reached the browser; want none", plain.Load())
			}
			if got := waits.Load(); (got == 1) != tt.wantWait || got > 1 {
				t.Errorf("OnWait called %d times; want it once: %v", got, tt.wantWait)
			}
			if tt.wantErr == nil {
				if err != nil {
					t.Fatal(err)
				}
				conn.Close()
				return
			}
			if err == nil {
				conn.Close()
				t.Fatal("connected; want an error")
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if tt.refuse && !errors.Is(err, ErrNotAllowed) {
				t.Errorf("error %v is not ErrNotAllowed", err)
			}
			if took > 5*time.Second {
				t.Errorf("failing took %s", took)
			}
		})
	}
}
