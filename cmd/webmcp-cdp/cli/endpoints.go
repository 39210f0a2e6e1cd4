package cli

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/webmcp-cdp/webmcp-cdp/cdp"
	"github.com/webmcp-cdp/webmcp-cdp/cdp/multi"
)

// NamedEndpoint is one --browser NAME=URL.
type NamedEndpoint struct {
	Name     string
	Endpoint cdp.Endpoint
}

// NamedEndpoints checks --browser (browsers, NAME=URL each) and
// --browser-header (headers, NAME='Header: value' each) and returns the
// browsers, in the order given, each trusting caFile's authorities when
// it is set; none without --browser.
func NamedEndpoints(browsers, headers []string, caFile string) ([]NamedEndpoint, error) {
	if len(browsers) == 0 {
		if len(headers) > 0 {
			return nil, Usage(errors.New("--browser-header needs --browser NAME=URL"))
		}
		return nil, nil
	}
	out := make([]NamedEndpoint, 0, len(browsers))
	index := map[string]int{}
	for _, v := range browsers {
		name, raw, ok := strings.Cut(v, "=")
		if !ok || strings.ContainsAny(name, ":/@?") { // a URL without a name
			return nil, Usage(fmt.Errorf("--browser %q: give NAME=URL, such as --browser local=http://127.0.0.1:9222", cdp.RedactURL(v)))
		}
		if err := multi.CheckName(name); err != nil {
			return nil, Usage(fmt.Errorf("--browser: %w", err))
		}
		if _, dup := index[name]; dup {
			return nil, Usage(fmt.Errorf("--browser: the name %q is given twice; give each browser its own name", name))
		}
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" {
			return nil, Usage(fmt.Errorf("--browser %s: the URL does not parse; give http(s)://host:port or ws(s)://...", name))
		}
		ne := NamedEndpoint{Name: name}
		switch u.Scheme {
		case "http", "https":
			ne.Endpoint.BrowserURL = raw
		case "ws", "wss":
			ne.Endpoint.WSEndpoint = raw
		default:
			return nil, Usage(fmt.Errorf("--browser %s: the URL must start with http://, https://, ws:// or wss://", name))
		}
		index[name] = len(out)
		out = append(out, ne)
	}
	lines := map[string][]string{}
	for _, v := range headers {
		name, line, ok := strings.Cut(v, "=")
		if _, known := index[name]; !ok || !known {
			return nil, Usage(fmt.Errorf("--browser-header: give NAME='Header: value' with NAME one of the --browser names (%s)", strings.Join(names(out), ", ")))
		}
		lines[name] = append(lines[name], line)
	}
	for name, ls := range lines {
		h, err := cdp.ParseHeaders(ls)
		if err != nil {
			return nil, Usage(fmt.Errorf("--browser-header %s: %w", name, err))
		}
		out[index[name]].Endpoint.Header = h
	}
	if caFile != "" {
		tc, err := cdp.TLSConfigWithCA(caFile)
		if err != nil {
			return nil, Usage(err)
		}
		for i := range out {
			out[i].Endpoint.TLS = tc
		}
	}
	return out, nil
}

func names(eps []NamedEndpoint) []string {
	out := make([]string, len(eps))
	for i, e := range eps {
		out[i] = e.Name
	}
	return out
}
