package userscript

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// pattern is a compiled alternation of URL patterns; the zero pattern
// matches nothing.
type pattern struct {
	src string
	re  *regexp.Regexp
}

func newPattern(alts []string) (pattern, error) {
	if len(alts) == 0 {
		return pattern{}, nil
	}
	src := "^(?:" + strings.Join(alts, "|") + ")$"
	re, err := regexp.Compile(src)
	if err != nil {
		return pattern{}, fmt.Errorf("its URL patterns do not compile (%w): report this as a bug with the header", err)
	}
	return pattern{src: src, re: re}, nil
}

func (p pattern) test(url string) bool { return p.re != nil && p.re.MatchString(url) }

// anyPort matches no port or any port, as a match pattern without one does.
const anyPort = `(?::[0-9]+)?`

// matchPattern turns a Chrome match pattern into a regular expression
// source, without anchors. Host and path match as Chrome matches them: a
// host "*.example.com" also takes example.com, no port (or :*) takes any
// port, the path is a glob over path and query, and a fragment is ignored.
func matchPattern(p string) (string, error) {
	if p == "<all_urls>" {
		return `(?:https?|wss?|ftp|file)://.*`, nil
	}
	scheme, rest, ok := strings.Cut(p, "://")
	if !ok {
		return "", errors.New("not a match pattern: write scheme://host/path, such as https://*.example.com/*")
	}
	var b strings.Builder
	switch scheme {
	case "*":
		b.WriteString("https?")
	case "http", "https", "ws", "wss", "ftp", "file":
		b.WriteString(scheme)
	default:
		return "", fmt.Errorf("scheme %q: use *, http, https, ws, wss, ftp or file", scheme)
	}
	b.WriteString("://")
	host, path, ok := strings.Cut(rest, "/")
	if !ok {
		return "", errors.New("has no path: end the host with / or /* (https://example.com/*)")
	}
	path = "/" + path
	if scheme == "file" {
		if host != "" && host != "localhost" {
			return "", fmt.Errorf("a file pattern has no host (file:///path), not %q", host)
		}
		return b.String() + glob(path) + "(?:#.*)?", nil
	}
	name, port, err := splitPort(host)
	if err != nil {
		return "", err
	}
	switch {
	case name == "":
		return "", errors.New("has no host: use * for any host")
	case name == "*":
		b.WriteString(`[^/?#:@]*`)
	case strings.HasPrefix(name, "*."):
		if strings.Contains(name[2:], "*") {
			return "", errors.New("a * in the host may only stand first, as in *.example.com")
		}
		b.WriteString(`(?:[^/?#:@]*\.)?` + regexp.QuoteMeta(strings.ToLower(name[2:])))
	case strings.Contains(name, "*"):
		return "", errors.New("a * in the host may only stand first, as in *.example.com")
	default:
		b.WriteString(regexp.QuoteMeta(strings.ToLower(name)))
	}
	switch {
	case port == "" || port == "*":
		b.WriteString(anyPort)
	case port == defaultPort(scheme):
		b.WriteString("(?::" + port + ")?")
	default:
		b.WriteString(":" + port)
	}
	return b.String() + glob(path) + "(?:#.*)?", nil
}

// splitPort splits host:port; an IPv6 address stays in brackets.
func splitPort(host string) (name, port string, err error) {
	i := strings.LastIndexByte(host, ':')
	if i < 0 || strings.HasSuffix(host, "]") {
		return host, "", nil
	}
	name, port = host[:i], host[i+1:]
	if port == "*" {
		return name, port, nil
	}
	if port == "" || len(port) > 5 || strings.Trim(port, "0123456789") != "" {
		return "", "", fmt.Errorf("port %q: give digits or *", port)
	}
	return name, port, nil
}

func defaultPort(scheme string) string {
	switch scheme {
	case "http", "ws":
		return "80"
	case "https", "wss":
		return "443"
	}
	return ""
}

// globPattern turns an @include glob (* stands for any text) into a
// regular expression source over the whole URL, without anchors.
func globPattern(g string) (string, error) {
	if len(g) > 1 && strings.HasPrefix(g, "/") && strings.HasSuffix(g, "/") {
		return "", errors.New("is a regular expression: webmcp-cdp takes * globs in @include and Chrome match patterns in @match; write it as one of those")
	}
	return glob(g), nil
}

// glob quotes g but for its *s, which match any text.
func glob(g string) string {
	parts := strings.Split(g, "*")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return strings.Join(parts, ".*")
}
