package cdp

import (
	"errors"
	"io/fs"
	"path"
	"strings"
	"testing"
	"time"
)

// fakeFile is a regular file or a folder of fakeSystem.
type fakeFile struct{ dir bool }

func (f fakeFile) Name() string       { return "" }
func (f fakeFile) Size() int64        { return 0 }
func (f fakeFile) Mode() fs.FileMode  { return map[bool]fs.FileMode{true: fs.ModeDir}[f.dir] }
func (f fakeFile) ModTime() time.Time { return time.Time{} }
func (f fakeFile) IsDir() bool        { return f.dir }
func (f fakeFile) Sys() any           { return nil }

// fakeSystem is a System over a map of files (path → is a folder), an
// environment, and a PATH of names; it never touches the real machine.
func fakeSystem(goos string, files map[string]bool, env map[string]string, onPath map[string]string) System {
	return System{
		GOOS: goos,
		Stat: func(p string) (fs.FileInfo, error) {
			dir, ok := files[p]
			if !ok {
				return nil, fs.ErrNotExist
			}
			return fakeFile{dir}, nil
		},
		Getenv: func(k string) string { return env[k] },
		LookPath: func(name string) (string, error) {
			if strings.ContainsAny(name, `/\`) {
				if _, ok := files[name]; ok {
					return name, nil
				}
				return "", fs.ErrNotExist
			}
			if p, ok := onPath[name]; ok {
				return p, nil
			}
			return "", errors.New("executable file not found in $PATH")
		},
		Glob: func(pattern string) ([]string, error) {
			var m []string
			for p := range files {
				// path.Match treats \ as an escape: compare Windows paths
				// with / in both.
				if ok, _ := path.Match(strings.ReplaceAll(pattern, `\`, "/"), strings.ReplaceAll(p, `\`, "/")); ok {
					m = append(m, p)
				}
			}
			return m, nil
		},
	}
}

func TestFindBrowser(t *testing.T) {
	macHome := map[string]string{"HOME": "/Users/ann"}
	winEnv := map[string]string{
		"ProgramFiles": `C:\Program Files`, "ProgramFiles(x86)": `C:\Program Files (x86)`,
		"LOCALAPPDATA": `C:\Users\ann\AppData\Local`, "USERPROFILE": `C:\Users\ann`,
	}
	for _, tc := range []struct {
		name    string
		goos    string
		files   map[string]bool
		env     map[string]string
		path    map[string]string
		chrome  string
		channel Channel
		want    string
	}{
		{name: "linux chrome in /opt", goos: "linux", files: map[string]bool{"/opt/google/chrome/chrome": false, "/usr/bin/chromium": false}, want: "/opt/google/chrome/chrome"},
		{name: "linux debian chromium", goos: "linux", files: map[string]bool{"/usr/bin/chromium": false}, want: "/usr/bin/chromium"},
		{name: "linux snap chromium", goos: "linux", files: map[string]bool{"/snap/bin/chromium": false}, want: "/snap/bin/chromium"},
		{name: "linux edge", goos: "linux", files: map[string]bool{"/opt/microsoft/msedge/msedge": false}, want: "/opt/microsoft/msedge/msedge"},
		{name: "linux brave", goos: "linux", files: map[string]bool{"/opt/brave.com/brave/brave": false}, want: "/opt/brave.com/brave/brave"},
		{name: "linux chrome for testing, newest", goos: "linux", env: map[string]string{"HOME": "/home/ann"}, files: map[string]bool{
			"/home/ann/.cache/puppeteer/chrome/linux-120.0.1/chrome-linux64/chrome": false,
			"/home/ann/.cache/puppeteer/chrome/linux-131.0.2/chrome-linux64/chrome": false,
		}, want: "/home/ann/.cache/puppeteer/chrome/linux-131.0.2/chrome-linux64/chrome"},
		{name: "linux a folder is not a browser", goos: "linux", files: map[string]bool{"/usr/bin/chromium": true, "/usr/bin/chromium-browser": false}, want: "/usr/bin/chromium-browser"},
		{name: "linux beta channel skips stable", goos: "linux", channel: ChannelBeta, files: map[string]bool{"/opt/google/chrome/chrome": false, "/opt/google/chrome-beta/chrome": false}, want: "/opt/google/chrome-beta/chrome"},
		{name: "linux dev channel is chrome unstable", goos: "linux", channel: ChannelDev, files: map[string]bool{"/usr/bin/google-chrome-unstable": false}, want: "/usr/bin/google-chrome-unstable"},
		{name: "linux canary edge", goos: "linux", channel: ChannelCanary, files: map[string]bool{"/opt/microsoft/msedge-canary/msedge": false}, want: "/opt/microsoft/msedge-canary/msedge"},
		{name: "linux PATH last", goos: "linux", path: map[string]string{"chromium": "/home/ann/bin/chromium"}, want: "/home/ann/bin/chromium"},
		{name: "linux usual path before PATH", goos: "linux", files: map[string]bool{"/usr/bin/chromium": false}, path: map[string]string{"google-chrome": "/home/ann/bin/google-chrome"}, want: "/usr/bin/chromium"},
		{name: "CHROME_PATH wins", goos: "linux", env: map[string]string{"CHROME_PATH": "/x/chrome"}, files: map[string]bool{"/x/chrome": false, "/usr/bin/chromium": false}, want: "/x/chrome"},
		{name: "--chrome wins", goos: "linux", chrome: "/y/chrome", env: map[string]string{"CHROME_PATH": "/x/chrome"}, files: map[string]bool{"/x/chrome": false, "/y/chrome": false}, want: "/y/chrome"},
		{name: "mac chrome", goos: "darwin", env: macHome, files: map[string]bool{"/Applications/Google Chrome.app/Contents/MacOS/Google Chrome": false}, want: "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome"},
		{name: "mac user applications", goos: "darwin", env: macHome, files: map[string]bool{"/Users/ann/Applications/Chromium.app/Contents/MacOS/Chromium": false}, want: "/Users/ann/Applications/Chromium.app/Contents/MacOS/Chromium"},
		{name: "mac canary", goos: "darwin", env: macHome, channel: ChannelCanary, files: map[string]bool{
			"/Applications/Google Chrome.app/Contents/MacOS/Google Chrome":               false,
			"/Applications/Google Chrome Canary.app/Contents/MacOS/Google Chrome Canary": false,
		}, want: "/Applications/Google Chrome Canary.app/Contents/MacOS/Google Chrome Canary"},
		{name: "mac edge", goos: "darwin", env: macHome, files: map[string]bool{"/Applications/Microsoft Edge.app/Contents/MacOS/Microsoft Edge": false}, want: "/Applications/Microsoft Edge.app/Contents/MacOS/Microsoft Edge"},
		{name: "mac brave", goos: "darwin", env: macHome, files: map[string]bool{"/Applications/Brave Browser.app/Contents/MacOS/Brave Browser": false}, want: "/Applications/Brave Browser.app/Contents/MacOS/Brave Browser"},
		{name: "mac chrome for testing", goos: "darwin", env: macHome, files: map[string]bool{"/Applications/Google Chrome for Testing.app/Contents/MacOS/Google Chrome for Testing": false}, want: "/Applications/Google Chrome for Testing.app/Contents/MacOS/Google Chrome for Testing"},
		{name: "windows chrome x86", goos: "windows", env: winEnv, files: map[string]bool{`C:\Program Files (x86)\Google\Chrome\Application\chrome.exe`: false}, want: `C:\Program Files (x86)\Google\Chrome\Application\chrome.exe`},
		{name: "windows chrome per user", goos: "windows", env: winEnv, files: map[string]bool{`C:\Users\ann\AppData\Local\Google\Chrome\Application\chrome.exe`: false}, want: `C:\Users\ann\AppData\Local\Google\Chrome\Application\chrome.exe`},
		{name: "windows canary is SxS", goos: "windows", env: winEnv, channel: ChannelCanary, files: map[string]bool{`C:\Users\ann\AppData\Local\Google\Chrome SxS\Application\chrome.exe`: false}, want: `C:\Users\ann\AppData\Local\Google\Chrome SxS\Application\chrome.exe`},
		{name: "windows edge", goos: "windows", env: winEnv, files: map[string]bool{`C:\Program Files (x86)\Microsoft\Edge\Application\msedge.exe`: false}, want: `C:\Program Files (x86)\Microsoft\Edge\Application\msedge.exe`},
		{name: "windows brave", goos: "windows", env: winEnv, files: map[string]bool{`C:\Program Files\BraveSoftware\Brave-Browser\Application\brave.exe`: false}, want: `C:\Program Files\BraveSoftware\Brave-Browser\Application\brave.exe`},
		{name: "windows default Program Files", goos: "windows", env: map[string]string{}, files: map[string]bool{`C:\Program Files\Google\Chrome\Application\chrome.exe`: false}, want: `C:\Program Files\Google\Chrome\Application\chrome.exe`},
		{name: "windows chrome for testing", goos: "windows", env: winEnv, files: map[string]bool{`C:\Users\ann\.cache\puppeteer\chrome\win64-131.0.1\chrome-win64\chrome.exe`: false}, want: `C:\Users\ann\.cache\puppeteer\chrome\win64-131.0.1\chrome-win64\chrome.exe`},
		{name: "windows PATH", goos: "windows", env: winEnv, path: map[string]string{"msedge.exe": `D:\edge\msedge.exe`}, want: `D:\edge\msedge.exe`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sys := fakeSystem(tc.goos, tc.files, tc.env, tc.path)
			got, err := sys.FindBrowser(tc.chrome, tc.channel)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("found %q, want %q", got, tc.want)
			}
		})
	}
}

func TestFindBrowserNothingListsEveryPlaceTried(t *testing.T) {
	for _, tc := range []struct {
		goos    string
		channel Channel
		env     map[string]string
		want    []string
	}{
		{"linux", ChannelStable, map[string]string{"HOME": "/home/ann"}, []string{"/opt/google/chrome/chrome", "/snap/bin/chromium", "/usr/bin/chromium", "/opt/microsoft/msedge/msedge", "/opt/brave.com/brave/brave", "/home/ann/.cache/puppeteer/chrome/linux-*/chrome-linux64/chrome", "chromium on PATH"}},
		{"linux", ChannelBeta, nil, []string{"/opt/google/chrome-beta/chrome", "/opt/microsoft/msedge-beta/msedge", "/opt/brave.com/brave-beta/brave", "google-chrome-beta on PATH"}},
		{"darwin", ChannelStable, map[string]string{"HOME": "/Users/ann"}, []string{"/Applications/Google Chrome.app/Contents/MacOS/Google Chrome", "/Users/ann/Applications/Google Chrome.app/Contents/MacOS/Google Chrome", "/Applications/Chromium.app/Contents/MacOS/Chromium"}},
		{"windows", ChannelStable, map[string]string{"LOCALAPPDATA": `C:\L`}, []string{`C:\Program Files\Google\Chrome\Application\chrome.exe`, `C:\Program Files (x86)\Google\Chrome\Application\chrome.exe`, `C:\L\Google\Chrome\Application\chrome.exe`, `C:\Program Files\Microsoft\Edge\Application\msedge.exe`, "chrome.exe on PATH"}},
	} {
		t.Run(tc.goos+"/"+string(tc.channel), func(t *testing.T) {
			_, err := fakeSystem(tc.goos, nil, tc.env, nil).FindBrowser("", tc.channel)
			if err == nil {
				t.Fatal("found a browser on an empty machine")
			}
			for _, w := range append(tc.want, "--chrome") {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the error does not name %q:\n%v", w, err)
				}
			}
		})
	}
}

func TestParseChannel(t *testing.T) {
	for in, want := range map[string]Channel{"": ChannelStable, "stable": ChannelStable, "Beta": ChannelBeta, "dev": ChannelDev, "canary": ChannelCanary} {
		if got, err := ParseChannel(in); err != nil || got != want {
			t.Errorf("ParseChannel(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseChannel("nightly"); err == nil || !strings.Contains(err.Error(), "canary") {
		t.Errorf("ParseChannel(nightly) = %v, want an error naming the channels", err)
	}
}

func TestProductString(t *testing.T) {
	if s := (Product{ProductEdge, ChannelBeta}).String(); s != "Edge beta" {
		t.Errorf("got %q", s)
	}
	if s := (Product{ProductChrome, ChannelStable}).String(); s != "Chrome" {
		t.Errorf("got %q", s)
	}
}
