package record

import (
	"net/url"
	"regexp"
	"strings"
)

// This file takes the secrets out of URLs: the page URL of each call, the
// URLs in a call's arguments, and those in its result's text. A URL's
// secrets are the values of its query and fragment parameters whose names
// look like secrets' (SecretName, the rule of arguments), and its userinfo
// (user:password@); each becomes a ${NAME} placeholder, as an argument's
// value does, and the rest of the URL is kept as it was, byte for byte.

// urlInText finds URLs in a result's text: a scheme, "://", and what
// follows up to a space, a quote or an angle bracket.
var urlInText = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s"'<>\\]+`)

// userinfo placeholders are named after these.
const (
	urlUser     = "url_user"
	urlPassword = "url_password"
)

// redactURL returns raw, a URL absolute or relative, with its secrets
// replaced by placeholders, and the names of the placeholders it wrote
// (none: raw is returned as it is).
//
// Query and fragment values are written ${NAME}, as Go's url.Parse and
// browsers accept them there. In userinfo url.Parse takes no braces, so
// with escape they are written percent-encoded ($%7BNAME%7D): a spec's page
// URL must parse (hub/ci checks it). An argument's URL keeps ${NAME}, which
// `webmcp-cdp test` fills in (a page parses it as browsers do).
func (s *secrets) redactURL(raw string, escape bool) (string, []string) {
	rest, frag, hasFrag := strings.Cut(raw, "#")
	rest, query, hasQuery := strings.Cut(rest, "?")
	var names []string
	if i := strings.Index(rest, "://"); i >= 0 {
		auth := rest[i+3:]
		end := strings.IndexByte(auth, '/')
		if end < 0 {
			end = len(auth)
		}
		if at := strings.LastIndexByte(auth[:end], '@'); at >= 0 {
			user, pass, hasPass := strings.Cut(auth[:at], ":")
			info := s.userinfo(urlUser, user, escape, &names)
			if hasPass {
				info += ":" + s.userinfo(urlPassword, pass, escape, &names)
			}
			rest = rest[:i+3] + info + auth[at:]
		}
	}
	if hasQuery {
		rest += "?" + s.redactParams(query, &names)
	}
	if hasFrag {
		// A fragment's parameters (#access_token=…&state=…) may follow a
		// route of a single-page app (#/callback?code=…).
		route, params := "", frag
		if i := strings.LastIndexByte(frag, '?'); i >= 0 {
			route, params = frag[:i+1], frag[i+1:]
		}
		if strings.Contains(params, "=") {
			params = s.redactParams(params, &names)
		}
		rest += "#" + route + params
	}
	if len(names) == 0 {
		return raw, nil
	}
	return rest, names
}

// userinfo returns the placeholder of one part of a URL's userinfo, named
// after name, adding its name to names; an empty part stays empty.
func (s *secrets) userinfo(name, value string, escape bool, names *[]string) string {
	if value == "" {
		return ""
	}
	p := s.placeholder(name, value)
	*names = append(*names, placeholderName(p))
	if escape {
		p = strings.NewReplacer("{", "%7B", "}", "%7D").Replace(p)
	}
	return p
}

// redactParams replaces the values of the secret-looking parameters of a
// query (name=value&…), adding the placeholders' names to names. A value
// is kept as the URL has it (percent-encoded), so that a placeholder
// filled in with it gives the same URL back.
func (s *secrets) redactParams(params string, names *[]string) string {
	parts := strings.Split(params, "&")
	for i, p := range parts {
		name, value, ok := strings.Cut(p, "=")
		if !ok || value == "" {
			continue
		}
		if n, err := url.QueryUnescape(name); err == nil {
			name = n
		}
		if !SecretName(name) {
			continue
		}
		ph := s.placeholder(name, value)
		*names = append(*names, placeholderName(ph))
		parts[i] = p[:len(p)-len(value)] + ph
	}
	return strings.Join(parts, "&")
}

// placeholderName is the NAME of ${NAME}.
func placeholderName(p string) string {
	return strings.TrimSuffix(strings.TrimPrefix(p, "${"), "}")
}

// urlShaped says whether an argument's string is a URL whose secrets
// redactURL would find: one word, absolute ("scheme://") or a path or
// query of the page ("/…", "?…").
func urlShaped(v string) bool {
	if v == "" || strings.ContainsAny(v, " \t\r\n") {
		return false
	}
	return strings.Contains(v, "://") || v[0] == '/' || v[0] == '?'
}

// learnURLs notes the secrets of the URLs in a result's text, so that
// scrub takes them out of it (and out of the other calls' results).
func (s *secrets) learnURLs(text string) {
	if !strings.Contains(text, "://") {
		return
	}
	for _, u := range urlInText.FindAllString(text, -1) {
		// Punctuation that ends a sentence is not the URL's.
		s.redactURL(strings.TrimRight(u, ".,;:!?)]}"), false)
	}
}
