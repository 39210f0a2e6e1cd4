// Package polyfill holds the page-side JavaScript of webmcp-cdp: the WebMCP
// page API (document.modelContext and the older navigator.modelContext) and
// the bridge that Go reads tools through and runs them with.
//
// The script is embedded in the binary. Script fills in the values that are
// secret to one browser session (the nonce that marks the bridge hand-off and
// the name of the runtime binding), so a page cannot predict them.
package polyfill

import (
	"embed"
	"fmt"
	"slices"
	"strings"
)

// The page script is one closure over topic files, joined in this order
// (chromedp keeps its embedded JS beside its Go the same way). Each file
// shares the closure's scope with the files before it, so the files are
// not scripts on their own: CI parses and lints the joined script
// (`webmcp-cdp polyfill`), and the browser tests run it.
var parts = []string{
	"intrinsics.js",  // header, placeholders, captured built-ins, the install guard
	"helpers.js",     // WebIDL conversions and small helpers
	"registry.js",    // the per-document registry, peers, tool definitions
	"policy.js",      // the Permissions Policy "tools", as Go decided it
	"execute.js",     // running and cancelling tools; this document's peer
	"exposure.js",    // tools of other origins in this tab, relayed by Go
	"selectors.js",   // :tool-form-active in selector APIs (before current.js, which installs)
	"current.js",     // document.modelContext (the W3C draft)
	"forms.js",       // declarative tools: <form toolname>
	"native.js",      // observing a native document.modelContext
	"legacy.js",      // navigator.modelContext (the older API)
	"adopt.js",       // an older polyfill loaded after this script
	"preexisting.js", // the page's own polyfill, installed before this script (attach)
	"pageserver.js",  // the proxy client of MCP-B page servers
	"bridge.js",      // the frozen bridge Go holds
}

//go:embed *.js
var files embed.FS

// source is the joined page script with its placeholders still in.
var source = join()

func join() string {
	var b strings.Builder
	b.WriteString("(() => {\n'use strict';\n")
	for _, name := range parts {
		f, err := files.ReadFile(name)
		if err != nil {
			panic("polyfill: " + name + " is listed in parts but not embedded")
		}
		b.WriteString("\n// ==== " + name + " ====\n")
		b.Write(f)
	}
	b.WriteString("})();\n")
	return b.String()
}

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

// Backends are the values --backend takes, in the order help gives them
// (shell completion offers them).
func Backends() []Backend { return []Backend{BackendAuto, BackendPolyfill, BackendNative} }

// ParseBackend checks a --backend value.
func ParseBackend(s string) (Backend, error) {
	if b := Backend(s); slices.Contains(Backends(), b) {
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
