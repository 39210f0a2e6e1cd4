package browsers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/webmcp-cdp/webmcp-cdp/cdp"
)

// lockedBuffer is a Notice writer read after OnWait's goroutine wrote it.
// Its first write closes written (when set): the notice came.
type lockedBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	written chan struct{}
	once    sync.Once
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.written != nil {
		b.once.Do(func() { close(b.written) })
	}
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// atOnce is a hold that is already over: the browser accepts at once.
var atOnce = func() <-chan struct{} { c := make(chan struct{}); close(c); return c }()

// allowServer is a browser's debugging WebSocket that holds the upgrade
// until hold ends (the Allow dialog) and then accepts. It returns the port.
func allowServer(t *testing.T, hold <-chan struct{}) int {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") == "" {
			http.NotFound(w, r)
			return
		}
		select {
		case <-hold:
		case <-r.Context().Done():
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
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().(*net.TCPAddr).Port
}

// closedPort is a loopback port nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return p
}

// writeActivePort writes DevToolsActivePort naming port into dir.
func writeActivePort(t *testing.T, dir string, port int) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	text := fmt.Sprintf("%d\n/devtools/browser/abc-123\n", port)
	if err := os.WriteFile(filepath.Join(dir, cdp.ActivePortFile), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestAutoConnectDial(t *testing.T) {
	tests := []struct {
		name string
		// setup writes the files under root and returns the source; a
		// browser it starts holds the Allow dialog until noticed ends (the
		// notice came, as a person clicks after reading it) or accepts at
		// once (atOnce).
		setup      func(t *testing.T, root string, noticed <-chan struct{}) *AutoConnect
		cancelled  bool
		wantNotice bool
		wantErr    []string
	}{
		{
			name: "user data dir, allowed at once",
			setup: func(t *testing.T, root string, noticed <-chan struct{}) *AutoConnect {
				writeActivePort(t, root, allowServer(t, atOnce))
				return &AutoConnect{UserDataDir: root}
			},
		},
		{
			name: "user data dir, allowed after the person clicked",
			setup: func(t *testing.T, root string, noticed <-chan struct{}) *AutoConnect {
				writeActivePort(t, root, allowServer(t, noticed))
				return &AutoConnect{UserDataDir: root, Timeout: 7 * time.Second}
			},
			wantNotice: true,
		},
		{
			name: "channel's usual directory",
			setup: func(t *testing.T, root string, noticed <-chan struct{}) *AutoConnect {
				writeActivePort(t, filepath.Join(root, "config", "google-chrome-beta"), allowServer(t, atOnce))
				return &AutoConnect{Channel: "beta", Env: cdp.UserDataEnv{GOOS: "linux", Home: root, XDGConfigHome: filepath.Join(root, "config")}}
			},
		},
		{
			name: "other channel's file is not read",
			setup: func(t *testing.T, root string, noticed <-chan struct{}) *AutoConnect {
				writeActivePort(t, filepath.Join(root, "config", "google-chrome"), allowServer(t, atOnce))
				return &AutoConnect{Channel: "beta", Env: cdp.UserDataEnv{GOOS: "linux", Home: root, XDGConfigHome: filepath.Join(root, "config")}}
			},
			wantErr: []string{filepath.Join("google-chrome-beta", cdp.ActivePortFile), "chrome://inspect/#remote-debugging"},
		},
		{
			name: "unknown channel",
			setup: func(t *testing.T, root string, noticed <-chan struct{}) *AutoConnect {
				return &AutoConnect{Channel: "nightly", Env: cdp.UserDataEnv{GOOS: "linux", Home: root}}
			},
			wantErr: []string{`--channel "nightly"`, "stable"},
		},
		{
			name: "no file",
			setup: func(t *testing.T, root string, noticed <-chan struct{}) *AutoConnect {
				return &AutoConnect{UserDataDir: root}
			},
			wantErr: []string{cdp.ActivePortFile, "chrome://inspect/#remote-debugging"},
		},
		{
			name: "no file, no browser named",
			setup: func(t *testing.T, root string, noticed <-chan struct{}) *AutoConnect {
				return &AutoConnect{UserDataDir: root, Implicit: true}
			},
			wantErr: []string{"attach needs a browser", "--browser-url", "--auto-connect", cdp.ActivePortFile},
		},
		{
			name: "stale port",
			setup: func(t *testing.T, root string, noticed <-chan struct{}) *AutoConnect {
				writeActivePort(t, root, closedPort(t))
				return &AutoConnect{UserDataDir: root}
			},
			wantErr: []string{"nothing listens", cdp.ActivePortFile},
		},
		{
			name: "cancelled while waiting for Allow",
			setup: func(t *testing.T, root string, noticed <-chan struct{}) *AutoConnect {
				writeActivePort(t, root, allowServer(t, make(chan struct{}))) // never allowed
				return &AutoConnect{UserDataDir: root, Implicit: true}
			},
			cancelled:  true,
			wantNotice: true,
			wantErr:    []string{"attach needs a browser", context.Canceled.Error()},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			notice := lockedBuffer{written: make(chan struct{})}
			src := tt.setup(t, root, notice.written)
			src.Notice = &notice
			// Events, not clocks: a case that wants the notice has it after
			// 100 ms and its browser answers (or its context ends) only once
			// it came; a case that must not have it has it a minute away,
			// so that a slow handshake on a loaded machine does not bring it.
			src.WaitNotice = time.Minute
			if tt.wantNotice {
				src.WaitNotice = 100 * time.Millisecond
			}
			src.Logger = slog.New(slog.DiscardHandler)
			ctx := t.Context()
			if tt.cancelled {
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(ctx)
				defer cancel()
				go func() {
					select {
					case <-notice.written:
						cancel()
					case <-ctx.Done():
					}
				}()
			}
			conn, err := src.Dial(ctx)
			if got := strings.Count(notice.String(), "click Allow"); (got == 1) != tt.wantNotice || got > 1 {
				t.Errorf("notice %q: want it once: %v", notice.String(), tt.wantNotice)
			}
			if tt.wantNotice && !strings.Contains(notice.String(), src.Timeout.String()) {
				t.Errorf("notice %q does not say how long it waits (%s)", notice.String(), src.Timeout)
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
			if tt.cancelled && !errors.Is(err, context.Canceled) {
				t.Errorf("error %v is not the context's", err)
			}
		})
	}
}

func TestAutoConnectSource(t *testing.T) {
	root := t.TempDir()
	writeActivePort(t, root, allowServer(t, atOnce))
	src := &AutoConnect{UserDataDir: root, Logger: slog.New(slog.DiscardHandler)}
	if src.Fresh() {
		t.Error("Fresh() = true; the person's browser has tabs of its own")
	}
	if !strings.Contains(src.String(), root) {
		t.Errorf("String() = %q; want it to name %s", src.String(), root)
	}
	br, err := src.Start(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if br.Conn() == nil || br.Gone() != nil {
		t.Errorf("Start: conn %v, gone %v; want a connection and no other news of the browser", br.Conn(), br.Gone())
	}
	if err := br.End(t.Context()); err != nil {
		t.Errorf("End: %v", err)
	}
}

func TestHostUserDataEnv(t *testing.T) {
	tests := []struct {
		name, xdg, localAppData string
	}{
		{"unset", "", ""},
		{"set", "/x/config", `C:\Users\ada\AppData\Local`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("XDG_CONFIG_HOME", tt.xdg)
			t.Setenv("LOCALAPPDATA", tt.localAppData)
			home, _ := os.UserHomeDir()
			want := cdp.UserDataEnv{GOOS: runtime.GOOS, Home: home, LocalAppData: tt.localAppData, XDGConfigHome: tt.xdg}
			if got := HostUserDataEnv(); got != want {
				t.Errorf("HostUserDataEnv() = %+v; want %+v", got, want)
			}
		})
	}
}
