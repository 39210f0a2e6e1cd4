package cdp

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// This file knows where browsers keep their user data directory on each
// operating system: the directory whose root holds DevToolsActivePort once
// a person turns remote debugging on at chrome://inspect/#remote-debugging.

// AutoConnectChannels are the --channel values of attach --auto-connect,
// in the order they are tried when none is given: launch's (Channels).
func AutoConnectChannels() []string {
	var out []string
	for _, c := range Channels() {
		out = append(out, string(c))
	}
	return out
}

// UserDataEnv is what UserDataDirs reads from the environment; tests fill
// it by hand, commands with HostEnv.
type UserDataEnv struct {
	// GOOS is the operating system (runtime.GOOS).
	GOOS string
	// Home is the home directory ($HOME).
	Home string
	// LocalAppData is %LOCALAPPDATA% (Windows).
	LocalAppData string
	// XDGConfigHome is $XDG_CONFIG_HOME (Linux; empty means ~/.config).
	XDGConfigHome string
}

// A UserDataDir is a browser's default profile root.
type UserDataDir struct {
	// Browser names the browser and channel, e.g. "Chrome Beta".
	Browser string
	// Dir is the user data directory.
	Dir string
}

// browserDirs are the user data directories relative to each OS's base
// (Linux: $XDG_CONFIG_HOME, macOS: ~/Library/Application Support,
// Windows: %LOCALAPPDATA%), from Chromium's docs/user_data_dir.md and each
// vendor's defaults. Chromium, Edge and
// Brave are listed without a channel (only Chrome's are told apart).
type browserDir struct {
	browser, channel       string
	linux, darwin, windows string
}

var browserDirs = []browserDir{
	{"Chrome", "stable", "google-chrome", "Google/Chrome", `Google\Chrome\User Data`},
	{"Chrome Beta", "beta", "google-chrome-beta", "Google/Chrome Beta", `Google\Chrome Beta\User Data`},
	{"Chrome Dev", "dev", "google-chrome-unstable", "Google/Chrome Dev", `Google\Chrome Dev\User Data`},
	{"Chrome Canary", "canary", "google-chrome-canary", "Google/Chrome Canary", `Google\Chrome SxS\User Data`},
	{"Chromium", "", "chromium", "Chromium", `Chromium\User Data`},
	{"Edge", "", "microsoft-edge", "Microsoft Edge", `Microsoft\Edge\User Data`},
	{"Brave", "", "BraveSoftware/Brave-Browser", "BraveSoftware/Brave-Browser", `BraveSoftware\Brave-Browser\User Data`},
}

// UserDataDirs returns the default user data directories to look in, most
// likely first. With a channel only that channel of Chrome is returned;
// without one, every channel of Chrome, then Chromium, Edge and Brave.
func UserDataDirs(env UserDataEnv, channel string) ([]UserDataDir, error) {
	if channel != "" && !isChannel(channel) {
		return nil, fmt.Errorf("--channel %q: use one of %s", channel, strings.Join(AutoConnectChannels(), ", "))
	}
	var base string
	var join func(string) string
	switch env.GOOS {
	case "windows":
		if env.LocalAppData == "" {
			return nil, errors.New("%LOCALAPPDATA% is not set: pass --user-data-dir")
		}
		base = env.LocalAppData
		join = func(rel string) string { return winJoin(base, rel) }
	case "darwin":
		if env.Home == "" {
			return nil, errors.New("$HOME is not set: pass --user-data-dir")
		}
		base = filepath.ToSlash(env.Home) + "/Library/Application Support"
		join = func(rel string) string { return base + "/" + rel }
	default: // linux and the other Unix systems Chrome builds for
		base = env.XDGConfigHome
		if base == "" {
			if env.Home == "" {
				return nil, errors.New("neither $XDG_CONFIG_HOME nor $HOME is set: pass --user-data-dir")
			}
			base = strings.TrimSuffix(env.Home, "/") + "/.config"
		}
		join = func(rel string) string { return strings.TrimSuffix(base, "/") + "/" + rel }
	}
	var out []UserDataDir
	for _, d := range browserDirs {
		if channel != "" && d.channel != channel {
			continue
		}
		rel := d.linux
		switch env.GOOS {
		case "windows":
			rel = d.windows
		case "darwin":
			rel = d.darwin
		}
		out = append(out, UserDataDir{Browser: d.browser, Dir: join(rel)})
	}
	return out, nil
}

// winJoin joins Windows path elements with backslashes, whatever OS this
// runs on (so the table is testable everywhere).
func winJoin(base, rel string) string {
	return strings.TrimRight(base, `\/`) + `\` + rel
}

func isChannel(c string) bool {
	return slices.Contains(AutoConnectChannels(), c)
}
