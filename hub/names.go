package hub

import (
	"crypto/sha256"
	"encoding/hex"
	"net"
	"net/url"
	"strings"
)

// MaxNameLen is the longest routed tool name. Some MCP clients reject
// longer names (and many prefix them with the server's own name).
const MaxNameLen = 48

// SiteOf returns the site part of routed names for a page origin: the host
// with dots (and the colons of an IPv6 address) as underscores, followed by
// the port when it is not the scheme's default. file: pages are "file", and
// an opaque or unparsable origin is "opaque".
func SiteOf(origin string) string {
	u, err := url.Parse(origin)
	if err != nil || u.Scheme == "" {
		return "opaque"
	}
	if u.Scheme == "file" {
		return "file"
	}
	host := u.Hostname()
	if host == "" {
		return "opaque"
	}
	site := host
	if ip := net.ParseIP(host); ip != nil && strings.Contains(host, ":") {
		site = strings.ReplaceAll(host, ":", "_")
	}
	site = strings.ReplaceAll(site, ".", "_")
	if port := u.Port(); port != "" && !(u.Scheme == "http" && port == "80") && !(u.Scheme == "https" && port == "443") {
		site += "_" + port
	}
	return sanitize(site)
}

// sanitize maps every character outside [A-Za-z0-9_-] to an underscore.
func sanitize(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	return string(b)
}

func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:8]
}

// toolPart is the tool's own name made safe for routed names. A name that
// had to change gets a hash of the original, so that "a.b" and "a_b" never
// share a routed name.
func toolPart(name string) string {
	s := sanitize(name)
	if s != name {
		s += "_" + shortHash(name)
	}
	return s
}

// RoutedName joins the parts of a routed name with underscores and cuts it
// to MaxNameLen, ending a cut name in a hash of the whole.
func RoutedName(parts ...string) string {
	n := strings.Join(parts, "_")
	if len(n) <= MaxNameLen {
		return n
	}
	h := shortHash(n)
	return n[:MaxNameLen-len(h)-1] + "_" + h
}
