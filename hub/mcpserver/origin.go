package mcpserver

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// This file guards the HTTP endpoint against DNS rebinding and cross-site
// requests: the Host and Origin headers must name this server.

// sitePolicy says which Host and Origin headers name this server: its own
// names (the loopback names for a loopback server, else the bound host when
// it is not 0.0.0.0 or ::) on its own port over http, and what
// --allowed-host adds.
type sitePolicy struct {
	// hosts are the host names (without port) a Host header may name.
	hosts map[string]bool
	// own are the server's own host names, port the port it listens on.
	own  map[string]bool
	port string
	// extra are the --allowed-host entries.
	extra []allowedOrigin
}

// allowedOrigin is one --allowed-host entry: "name" (the server's port or
// the scheme's default port, over http or https: a server reached by name,
// often through a proxy), "name:port" (that port, either scheme) or an
// origin "https://name:port" (just that).
type allowedOrigin struct {
	scheme, host, port string // "" for any scheme; "" for the default rule
}

// parseAllowedHost reads one --allowed-host entry.
func parseAllowedHost(v string) (allowedOrigin, error) {
	v = strings.ToLower(strings.TrimSpace(v))
	if strings.Contains(v, "://") {
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
			return allowedOrigin{}, fmt.Errorf("--allowed-host %q: give a name, name:port or an origin such as https://name:8443", v)
		}
		return allowedOrigin{scheme: u.Scheme, host: u.Hostname(), port: portOf(u)}, nil
	}
	if h, p, err := net.SplitHostPort(v); err == nil {
		if _, err := strconv.ParseUint(p, 10, 16); err != nil || h == "" {
			return allowedOrigin{}, fmt.Errorf("--allowed-host %q: the port must be a number", v)
		}
		return allowedOrigin{host: h, port: p}, nil
	}
	v = strings.Trim(v, "[]")
	if v == "" || strings.ContainsAny(v, "/?#@ ") {
		return allowedOrigin{}, fmt.Errorf("--allowed-host %q: give a name, name:port or an origin such as https://name:8443", v)
	}
	return allowedOrigin{host: v}, nil
}

// CheckAllowedHosts checks --allowed-host entries before anything starts.
func CheckAllowedHosts(entries []string) error {
	for _, e := range entries {
		if _, err := parseAllowedHost(e); err != nil {
			return err
		}
	}
	return nil
}

// portOf is a URL's port, or its scheme's default.
func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "https" {
		return "443"
	}
	return "80"
}

// newSitePolicy builds the policy of a server bound to bound.
func newSitePolicy(bound string, loopback bool, extra []string) (*sitePolicy, error) {
	host, port, err := net.SplitHostPort(bound)
	if err != nil {
		return nil, fmt.Errorf("the listening address %q: %w", bound, err)
	}
	p := &sitePolicy{hosts: map[string]bool{}, own: map[string]bool{}, port: port}
	if loopback {
		for _, h := range []string{"localhost", "127.0.0.1", "::1"} {
			p.own[h] = true
		}
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsUnspecified() {
		p.own[strings.ToLower(host)] = true
	}
	for h := range p.own {
		p.hosts[h] = true
	}
	for _, e := range extra {
		a, err := parseAllowedHost(e)
		if err != nil {
			return nil, err
		}
		p.extra = append(p.extra, a)
		p.hosts[a.host] = true
	}
	return p, nil
}

// checkOrigin returns "" when origin is this server's (same scheme, host
// and port, or allowed by --allowed-host), else why not, for the reader.
func (p *sitePolicy) checkOrigin(origin string) string {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return "it is not an http or https origin"
	}
	host, port := strings.ToLower(u.Hostname()), portOf(u)
	why := ""
	if p.own[host] {
		switch {
		case u.Scheme != "http":
			why = fmt.Sprintf("this server speaks http, not %s", u.Scheme)
		case port != p.port:
			why = fmt.Sprintf("this server is on port %s, not port %s", p.port, port)
		default:
			return ""
		}
	}
	for _, a := range p.extra {
		if a.host != host {
			continue
		}
		switch {
		case a.scheme != "" && a.scheme != u.Scheme:
			why = fmt.Sprintf("--allowed-host allows %s://%s:%s, not %s", a.scheme, a.host, a.port, u.Scheme)
		case a.port != "" && a.port != port:
			why = fmt.Sprintf("--allowed-host allows %s on port %s, not port %s", a.host, a.port, port)
		case a.port == "" && port != p.port && port != portOf(&url.URL{Scheme: u.Scheme}):
			why = fmt.Sprintf("--allowed-host %s allows this server's port %s and the default port, not port %s", a.host, p.port, port)
		default:
			return ""
		}
	}
	if why == "" {
		why = fmt.Sprintf("the host %q is not this server's name (--allowed-host adds names)", host)
	}
	return why
}

// originGuard refuses requests whose Host or Origin is not the server's own,
// against DNS rebinding and cross-site requests from browsers. A server on
// 0.0.0.0 without extra names cannot know its own name: there Host is not
// checked (the token still is), but a browser Origin must be a known name.
// Host is compared by name only (a proxy in front may change the port);
// Origin, which browsers send and a page cannot forge, by scheme, name and
// port, so that a page on another port of the same host is refused too.
func originGuard(next http.Handler, p *sitePolicy, loopback bool) http.Handler {
	checkHost := loopback || len(p.hosts) > 0
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if checkHost {
			h := r.Host
			if hh, _, err := net.SplitHostPort(h); err == nil {
				h = hh
			}
			if !p.hosts[strings.ToLower(strings.Trim(h, "[]"))] {
				http.Error(w, fmt.Sprintf("forbidden: Host %q is not this server's", r.Host), http.StatusForbidden)
				return
			}
		}
		if o := r.Header.Get("Origin"); o != "" {
			if why := p.checkOrigin(o); why != "" {
				http.Error(w, fmt.Sprintf("forbidden: Origin %q is not this server's: %s", o, why), http.StatusForbidden)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}
