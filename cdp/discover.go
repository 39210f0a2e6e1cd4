package cdp

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
)

// This file finds the browser to launch: the table of where Chrome, Chrome
// for Testing, Chromium, Edge and Brave are installed on Linux, macOS and
// Windows, per release channel, then PATH.

// Channel is a browser release channel.
type Channel string

// The release channels that --channel accepts. Chromium and Chrome for
// Testing have no channels: they count as stable.
const (
	ChannelStable Channel = "stable"
	ChannelBeta   Channel = "beta"
	ChannelDev    Channel = "dev"
	ChannelCanary Channel = "canary"
)

// Channels are the values --channel takes (shell completion offers them).
func Channels() []Channel { return []Channel{ChannelStable, ChannelBeta, ChannelDev, ChannelCanary} }

// ParseChannel checks a --channel value; empty means stable.
func ParseChannel(s string) (Channel, error) {
	c := Channel(strings.ToLower(strings.TrimSpace(s)))
	if c == "" {
		return ChannelStable, nil
	}
	if slices.Contains(Channels(), c) {
		return c, nil
	}
	return "", fmt.Errorf("--channel %q: use stable, beta, dev or canary", s)
}

// The browser products that discovery knows.
const (
	ProductChrome           = "Chrome"
	ProductChromeForTesting = "Chrome for Testing"
	ProductChromium         = "Chromium"
	ProductEdge             = "Edge"
	ProductBrave            = "Brave"
)

// Product is one browser product in one release channel, such as Chrome
// beta or Edge stable. Other per-OS lookups (a profile directory, say) key
// their tables on it.
type Product struct {
	Name    string
	Channel Channel
}

func (p Product) String() string {
	if p.Channel == ChannelStable || p.Channel == "" {
		return p.Name
	}
	return p.Name + " " + string(p.Channel)
}

// Products lists the products of a channel in the order discovery prefers
// them.
func Products(c Channel) []Product {
	if c == ChannelStable || c == "" {
		return []Product{
			{ProductChrome, ChannelStable}, {ProductChromeForTesting, ChannelStable},
			{ProductChromium, ChannelStable}, {ProductEdge, ChannelStable}, {ProductBrave, ChannelStable},
		}
	}
	ps := []Product{{ProductChrome, c}, {ProductEdge, c}}
	if c != ChannelDev { // Brave has beta and nightly (listed as canary)
		ps = append(ps, Product{ProductBrave, c})
	}
	return ps
}

// System is what discovery reads of the machine; tests give a fake one.
type System struct {
	// GOOS is runtime.GOOS: linux, darwin or windows (others are treated
	// as linux).
	GOOS string
	// Stat is os.Stat.
	Stat func(string) (fs.FileInfo, error)
	// Getenv is os.Getenv.
	Getenv func(string) string
	// LookPath is exec.LookPath.
	LookPath func(string) (string, error)
	// Glob is filepath.Glob (for versioned Chrome for Testing folders).
	Glob func(string) ([]string, error)
}

// HostSystem is the machine this process runs on.
func HostSystem() System {
	return System{GOOS: runtime.GOOS, Stat: os.Stat, Getenv: os.Getenv, LookPath: exec.LookPath, Glob: filepath.Glob}
}

// join joins path elements with the separator of sys's OS (not the host's:
// the tables are tested for every OS on one).
func (sys System) join(elem ...string) string {
	if sys.GOOS == "windows" {
		return strings.Join(elem, `\`)
	}
	return strings.Join(elem, "/")
}

// Install is a place a product may be installed at.
type Install struct {
	Product Product
	// Path is the executable; a pattern with * when Glob is set.
	Path string
	// Glob says that Path is a pattern (the newest match is taken).
	Glob bool
}

// Installs returns the usual install paths of product p on sys, best first.
func (sys System) Installs(p Product) []Install {
	var paths []string
	glob := false
	switch sys.GOOS {
	case "darwin":
		paths, glob = sys.darwinPaths(p)
	case "windows":
		paths, glob = sys.windowsPaths(p)
	default:
		paths, glob = sys.linuxPaths(p)
	}
	out := make([]Install, 0, len(paths))
	for _, path := range paths {
		out = append(out, Install{Product: p, Path: path, Glob: glob})
	}
	return out
}

// channelName picks the word each vendor uses for a channel: stable,
// beta, dev, canary in order; "" drops the product for that channel.
func channelName(c Channel, stable, beta, dev, canary string) string {
	switch c {
	case ChannelBeta:
		return beta
	case ChannelDev:
		return dev
	case ChannelCanary:
		return canary
	}
	return stable
}

// linuxVendor is where a vendor's Linux packages put a channel: the folder
// under /opt and the name in /usr/bin, per channel (stable, beta, dev,
// canary; "" where there is none), and one more path for stable.
type linuxVendor struct {
	opt, exe    string
	dirs, bins  [4]string
	stableExtra string
}

// linuxVendorOf returns the Linux layout of a product's vendor.
func linuxVendorOf(name string) (linuxVendor, bool) {
	switch name {
	case ProductChrome:
		return linuxVendor{"/opt/google/", "chrome",
			[4]string{"chrome", "chrome-beta", "chrome-unstable", "chrome-canary"},
			[4]string{"google-chrome-stable", "google-chrome-beta", "google-chrome-unstable", "google-chrome-canary"},
			"/usr/bin/google-chrome"}, true
	case ProductEdge:
		return linuxVendor{"/opt/microsoft/", "msedge",
			[4]string{"msedge", "msedge-beta", "msedge-dev", "msedge-canary"},
			[4]string{"microsoft-edge-stable", "microsoft-edge-beta", "microsoft-edge-dev", "microsoft-edge-canary"},
			"/usr/bin/microsoft-edge"}, true
	case ProductBrave:
		return linuxVendor{"/opt/brave.com/", "brave",
			[4]string{"brave", "brave-beta", "", "brave-nightly"},
			[4]string{"brave-browser", "brave-browser-beta", "", "brave-browser-nightly"},
			"/snap/bin/brave"}, true
	}
	return linuxVendor{}, false
}

func (sys System) linuxPaths(p Product) ([]string, bool) {
	switch p.Name {
	case ProductChromeForTesting:
		home := sys.Getenv("HOME")
		if home == "" {
			return nil, false
		}
		return []string{home + "/.cache/puppeteer/chrome/linux-*/chrome-linux64/chrome"}, true
	case ProductChromium:
		return []string{"/usr/bin/chromium", "/usr/bin/chromium-browser", "/snap/bin/chromium", "/usr/lib/chromium/chromium"}, false
	}
	v, ok := linuxVendorOf(p.Name)
	if !ok {
		return nil, false
	}
	dir := channelName(p.Channel, v.dirs[0], v.dirs[1], v.dirs[2], v.dirs[3])
	bin := channelName(p.Channel, v.bins[0], v.bins[1], v.bins[2], v.bins[3])
	if dir == "" {
		return nil, false
	}
	paths := []string{v.opt + dir + "/" + v.exe, "/usr/bin/" + bin}
	if p.Channel == ChannelStable {
		paths = append(paths, v.stableExtra)
	}
	return paths, false
}

func (sys System) darwinPaths(p Product) ([]string, bool) {
	home := sys.Getenv("HOME")
	var app string // the .app's name, which is also its executable's
	switch p.Name {
	case ProductChrome:
		app = channelName(p.Channel, "Google Chrome", "Google Chrome Beta", "Google Chrome Dev", "Google Chrome Canary")
	case ProductChromeForTesting:
		app = "Google Chrome for Testing"
	case ProductChromium:
		app = "Chromium"
	case ProductEdge:
		app = channelName(p.Channel, "Microsoft Edge", "Microsoft Edge Beta", "Microsoft Edge Dev", "Microsoft Edge Canary")
	case ProductBrave:
		app = channelName(p.Channel, "Brave Browser", "Brave Browser Beta", "", "Brave Browser Nightly")
	}
	if app == "" {
		return nil, false
	}
	inApp := app + ".app/Contents/MacOS/" + app
	paths := []string{"/Applications/" + inApp}
	if home != "" {
		paths = append(paths, home+"/Applications/"+inApp)
	}
	if p.Name == ProductChromeForTesting && home != "" {
		return append(paths, home+"/.cache/puppeteer/chrome/mac*-*/chrome-mac-*/"+inApp), true
	}
	return paths, false
}

func (sys System) windowsPaths(p Product) ([]string, bool) {
	getenv := func(name, def string) string {
		if v := sys.Getenv(name); v != "" {
			return v
		}
		return def
	}
	roots := []string{
		getenv("ProgramFiles", `C:\Program Files`),
		getenv("ProgramFiles(x86)", `C:\Program Files (x86)`),
	}
	if local := sys.Getenv("LOCALAPPDATA"); local != "" {
		roots = append(roots, local)
	}
	var dir, exe string
	switch p.Name {
	case ProductChrome:
		dir, exe = sys.join("Google", channelName(p.Channel, "Chrome", "Chrome Beta", "Chrome Dev", "Chrome SxS")), "chrome.exe"
	case ProductChromeForTesting:
		if home := sys.Getenv("USERPROFILE"); home != "" {
			return []string{sys.join(home, ".cache", "puppeteer", "chrome", "win64-*", "chrome-win64", "chrome.exe")}, true
		}
		return nil, false
	case ProductChromium:
		dir, exe = "Chromium", "chrome.exe"
	case ProductEdge:
		dir, exe = sys.join("Microsoft", channelName(p.Channel, "Edge", "Edge Beta", "Edge Dev", "Edge SxS")), "msedge.exe"
	case ProductBrave:
		name := channelName(p.Channel, "Brave-Browser", "Brave-Browser-Beta", "", "Brave-Browser-Nightly")
		if name == "" {
			return nil, false
		}
		dir, exe = sys.join("BraveSoftware", name), "brave.exe"
	default:
		return nil, false
	}
	paths := make([]string, 0, len(roots))
	for _, r := range roots {
		paths = append(paths, sys.join(r, dir, "Application", exe))
	}
	return paths, false
}

// pathNames are the executable names looked up on PATH after the usual
// paths, per channel.
func (sys System) pathNames(c Channel) []string {
	if sys.GOOS == "windows" {
		if c == ChannelStable {
			return []string{"chrome.exe", "msedge.exe", "brave.exe"}
		}
		return nil
	}
	switch c {
	case ChannelBeta:
		return []string{"google-chrome-beta", "microsoft-edge-beta", "brave-browser-beta"}
	case ChannelDev:
		return []string{"google-chrome-unstable", "microsoft-edge-dev"}
	case ChannelCanary:
		return []string{"google-chrome-canary", "microsoft-edge-canary", "brave-browser-nightly"}
	}
	return []string{"google-chrome-stable", "google-chrome", "chromium", "chromium-browser", "microsoft-edge", "brave-browser"}
}

// FindBrowser returns the browser executable to start: path if given
// (looked up on PATH when it has no separator), else $CHROME_PATH, else the
// first product of the channel installed at its usual place (Products,
// Installs), else the first known name on PATH. The error lists every
// place tried.
func (sys System) FindBrowser(path string, c Channel) (string, error) {
	if path != "" {
		return sys.LookPath(path)
	}
	if p := sys.Getenv("CHROME_PATH"); p != "" {
		exe, err := sys.LookPath(p)
		if err != nil {
			return "", fmt.Errorf("$CHROME_PATH: %w", err)
		}
		return exe, nil
	}
	if c == "" {
		c = ChannelStable
	}
	var tried []string
	for _, p := range Products(c) {
		for _, in := range sys.Installs(p) {
			tried = append(tried, in.Path)
			if exe, ok := sys.found(in); ok {
				return exe, nil
			}
		}
	}
	for _, name := range sys.pathNames(c) {
		tried = append(tried, name+" on PATH")
		if exe, err := sys.LookPath(name); err == nil {
			return exe, nil
		}
	}
	what := "Chrome, Chromium, Edge or Brave"
	if c != ChannelStable {
		what = "a " + string(c) + " channel of Chrome, Edge or Brave"
	}
	return "", errors.New("no browser found: looked for " + what + " at\n  " + strings.Join(tried, "\n  ") +
		"\npass --chrome PATH (or set CHROME_PATH) to the browser executable, or install Chromium (on Debian: apt-get install -y chromium)")
}

// found reports whether an install exists as a regular file, and its path
// (the newest by name when Path is a pattern).
func (sys System) found(in Install) (string, bool) {
	paths := []string{in.Path}
	if in.Glob {
		if sys.Glob == nil {
			return "", false
		}
		m, err := sys.Glob(in.Path)
		if err != nil || len(m) == 0 {
			return "", false
		}
		sort.Strings(m)
		paths = []string{m[len(m)-1]}
	}
	fi, err := sys.Stat(paths[0])
	if err != nil || fi.IsDir() {
		return "", false
	}
	return paths[0], true
}

// FindChrome returns the browser to start on this machine: path if set,
// else $CHROME_PATH, else the first stable browser at its usual place, else
// on PATH (System.FindBrowser).
func FindChrome(path string) (string, error) {
	return HostSystem().FindBrowser(path, ChannelStable)
}
