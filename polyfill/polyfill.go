// Package polyfill holds the page-side JavaScript of webmcp-cdp: the WebMCP
// page API (document.modelContext and the older navigator.modelContext) and
// the bridge that Go reads tools through and runs them with.
//
// The script is embedded in the binary. Script fills in the values that are
// secret to one browser session (the nonce that marks the bridge hand-off and
// the name of the runtime binding), so a page cannot predict them.
package polyfill

import (
	_ "embed"
	"fmt"
	"strings"
)

//go:embed webmcp.js
var source string

// BridgeMarker starts the console.debug message that hands the bridge object
// to Go; the nonce follows it.
const BridgeMarker = "__webmcp_cdp_bridge__:"

// Backend says which WebMCP implementation a page gets.
type Backend string

// The backends.
const (
	// BackendAuto uses the browser's native document.modelContext where it
	// exists, and the polyfill elsewhere.
	BackendAuto Backend = "auto"
	// BackendPolyfill always installs the polyfill, even over a native API.
	BackendPolyfill Backend = "polyfill"
	// BackendNative expects the browser's native API.
	BackendNative Backend = "native"
)

// ParseBackend checks a --backend value.
func ParseBackend(s string) (Backend, error) {
	switch b := Backend(s); b {
	case BackendAuto, BackendPolyfill, BackendNative:
		return b, nil
	}
	return "", fmt.Errorf("unknown backend %q: use auto, polyfill or native", s)
}

// Options fills in the script.
type Options struct {
	// Nonce marks the bridge hand-off; only [A-Za-z0-9] characters.
	Nonce string
	// Binding is the name of the runtime binding that pings Go on changes;
	// only [A-Za-z0-9_$] characters.
	Binding string
	// Backend is the backend the script defers to.
	Backend Backend
}

// Script returns the page script for opts.
func Script(opts Options) (string, error) {
	if !safe(opts.Nonce, "") || !safe(opts.Binding, "_$") {
		return "", fmt.Errorf("polyfill: nonce %q or binding %q has characters outside [A-Za-z0-9_$]", opts.Nonce, opts.Binding)
	}
	if opts.Backend == "" {
		opts.Backend = BackendAuto
	}
	if _, err := ParseBackend(string(opts.Backend)); err != nil {
		return "", fmt.Errorf("polyfill: %w", err)
	}
	return strings.NewReplacer(
		"__WEBMCP_CDP_NONCE__", opts.Nonce,
		"__WEBMCP_CDP_BINDING__", opts.Binding,
		"__WEBMCP_CDP_BACKEND__", string(opts.Backend),
	).Replace(source), nil
}

// Standalone returns the script for a site's own tests: no bridge to Go is
// reachable (the binding does not exist), but the page API works in full.
func Standalone() string {
	s, _ := Script(Options{Nonce: "standalone", Binding: "__webmcpCdpStandalone", Backend: BackendAuto})
	return s
}

func safe(s, extra string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || strings.ContainsRune(extra, r)) {
			return false
		}
	}
	return true
}
