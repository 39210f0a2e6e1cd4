package cdp

import (
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

func TestUserDataDirs(t *testing.T) {
	linux := UserDataEnv{GOOS: "linux", Home: "/home/ada"}
	tests := []struct {
		name    string
		env     UserDataEnv
		channel string
		want    []string
		wantErr string
	}{
		{"linux, every browser", linux, "", []string{
			"/home/ada/.config/google-chrome", "/home/ada/.config/google-chrome-beta",
			"/home/ada/.config/google-chrome-unstable", "/home/ada/.config/google-chrome-canary",
			"/home/ada/.config/chromium", "/home/ada/.config/microsoft-edge",
			"/home/ada/.config/BraveSoftware/Brave-Browser",
		}, ""},
		{"linux, XDG_CONFIG_HOME wins", UserDataEnv{GOOS: "linux", Home: "/home/ada", XDGConfigHome: "/xdg/"}, "beta",
			[]string{"/xdg/google-chrome-beta"}, ""},
		{"linux, dev channel", linux, "dev", []string{"/home/ada/.config/google-chrome-unstable"}, ""},
		{"freebsd is like linux", UserDataEnv{GOOS: "freebsd", Home: "/usr/home/ada"}, "stable",
			[]string{"/usr/home/ada/.config/google-chrome"}, ""},
		{"macOS, every browser", UserDataEnv{GOOS: "darwin", Home: "/Users/ada", XDGConfigHome: "/ignored"}, "", []string{
			"/Users/ada/Library/Application Support/Google/Chrome",
			"/Users/ada/Library/Application Support/Google/Chrome Beta",
			"/Users/ada/Library/Application Support/Google/Chrome Dev",
			"/Users/ada/Library/Application Support/Google/Chrome Canary",
			"/Users/ada/Library/Application Support/Chromium",
			"/Users/ada/Library/Application Support/Microsoft Edge",
			"/Users/ada/Library/Application Support/BraveSoftware/Brave-Browser",
		}, ""},
		{"macOS canary", UserDataEnv{GOOS: "darwin", Home: "/Users/ada"}, "canary",
			[]string{"/Users/ada/Library/Application Support/Google/Chrome Canary"}, ""},
		{"windows, every browser", UserDataEnv{GOOS: "windows", Home: `C:\Users\ada`, LocalAppData: `C:\Users\ada\AppData\Local\`}, "", []string{
			`C:\Users\ada\AppData\Local\Google\Chrome\User Data`,
			`C:\Users\ada\AppData\Local\Google\Chrome Beta\User Data`,
			`C:\Users\ada\AppData\Local\Google\Chrome Dev\User Data`,
			`C:\Users\ada\AppData\Local\Google\Chrome SxS\User Data`,
			`C:\Users\ada\AppData\Local\Chromium\User Data`,
			`C:\Users\ada\AppData\Local\Microsoft\Edge\User Data`,
			`C:\Users\ada\AppData\Local\BraveSoftware\Brave-Browser\User Data`,
		}, ""},
		{"windows canary is SxS", UserDataEnv{GOOS: "windows", LocalAppData: `D:\L`}, "canary",
			[]string{`D:\L\Google\Chrome SxS\User Data`}, ""},
		{"windows without LOCALAPPDATA", UserDataEnv{GOOS: "windows", Home: `C:\Users\ada`}, "", nil, "LOCALAPPDATA"},
		{"macOS without HOME", UserDataEnv{GOOS: "darwin"}, "", nil, "HOME"},
		{"linux without HOME or XDG", UserDataEnv{GOOS: "linux"}, "", nil, "XDG_CONFIG_HOME"},
		{"unknown channel", linux, "nightly", nil, `--channel "nightly"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := UserDataDirs(tt.env, tt.channel)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one that mentions %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var dirs []string
			for _, d := range got {
				dirs = append(dirs, d.Dir)
				if d.Browser == "" {
					t.Errorf("%s has no browser name", d.Dir)
				}
			}
			if !slices.Equal(dirs, tt.want) {
				t.Errorf("dirs =\n%q\nwant\n%q", dirs, tt.want)
			}
		})
	}
}

// fakeRead reads a fake filesystem rooted at "/".
func fakeRead(fsys fstest.MapFS) func(string) ([]byte, error) {
	return func(name string) ([]byte, error) {
		return fs.ReadFile(fsys, strings.TrimPrefix(filepath.ToSlash(name), "/"))
	}
}

func TestFindActivePort(t *testing.T) {
	env := UserDataEnv{GOOS: "linux", Home: "/home/ada"}
	dirs, err := UserDataDirs(env, "")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		files    fstest.MapFS
		wantFile string
		wantURL  string
		wantErr  []string
	}{
		{"beta has it", fstest.MapFS{
			"home/ada/.config/google-chrome-beta/DevToolsActivePort": {Data: []byte("9333\n/devtools/browser/abc-123\n")},
			"home/ada/.config/chromium/DevToolsActivePort":           {Data: []byte("9444\n/devtools/browser/zzz\n")},
		}, "/home/ada/.config/google-chrome-beta/DevToolsActivePort", "ws://127.0.0.1:9333/devtools/browser/abc-123", nil},
		{"windows line ends", fstest.MapFS{
			"home/ada/.config/microsoft-edge/DevToolsActivePort": {Data: []byte("9222\r\n/devtools/browser/e\r\n")},
		}, "/home/ada/.config/microsoft-edge/DevToolsActivePort", "ws://127.0.0.1:9222/devtools/browser/e", nil},
		{"none", fstest.MapFS{}, "", "", []string{"/home/ada/.config/google-chrome/DevToolsActivePort", "/home/ada/.config/BraveSoftware/Brave-Browser/DevToolsActivePort", "chrome://inspect/#remote-debugging"}},
		{"garbage port", fstest.MapFS{
			"home/ada/.config/google-chrome/DevToolsActivePort": {Data: []byte("http\n/devtools/browser/x\n")},
		}, "", "", []string{"/home/ada/.config/google-chrome/DevToolsActivePort", "not a port number", "chrome://inspect/#remote-debugging"}},
		{"no path", fstest.MapFS{
			"home/ada/.config/google-chrome/DevToolsActivePort": {Data: []byte("9222\n")},
		}, "", "", []string{"WebSocket path"}},
		{"path with a query", fstest.MapFS{
			"home/ada/.config/google-chrome/DevToolsActivePort": {Data: []byte("9222\n/devtools/browser/x?y\n")},
		}, "", "", []string{"plain WebSocket path"}},
		{"huge file", fstest.MapFS{
			"home/ada/.config/google-chrome/DevToolsActivePort": {Data: []byte(strings.Repeat("9", 5000))},
		}, "", "", []string{"bytes long"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ap, err := FindActivePort(dirs, fakeRead(tt.files))
			if tt.wantErr != nil {
				if err == nil {
					t.Fatalf("found %+v, want an error", ap)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not mention %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ap.File != tt.wantFile || ap.URL() != tt.wantURL {
				t.Errorf("got %s → %s, want %s → %s", ap.File, ap.URL(), tt.wantFile, tt.wantURL)
			}
		})
	}
}
