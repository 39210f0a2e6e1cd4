package cdp

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
)

// Endpoint says where a running browser is and how to reach it: a
// debugging address whose /json/version names the WebSocket URL, or the
// WebSocket URL itself, with the headers and TLS settings both requests use.
type Endpoint struct {
	// BrowserURL is the debugging address (http://127.0.0.1:9222). A path
	// and a query (http://host/chrome?token=T) are kept: the query goes on
	// the WebSocket URL too.
	BrowserURL string
	// WSEndpoint is the WebSocket URL (ws:// or wss://), instead of
	// BrowserURL.
	WSEndpoint string
	// Header is sent on the /json/version request and the WebSocket
	// upgrade. Its values are never logged.
	Header http.Header
	// TLS configures https:// and wss://; nil trusts the system roots.
	TLS *tls.Config
}

// ParseHeaders reads "Name: value" lines (the --header flag) into a header.
// Its errors name the header, never its value, which is often a secret.
func ParseHeaders(lines []string) (http.Header, error) {
	h := http.Header{}
	for i, line := range lines {
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("--header #%d has no colon: write it as 'Name: value', e.g. 'Authorization: Bearer TOKEN'", i+1)
		}
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if !validHeaderName(name) {
			return nil, fmt.Errorf("--header #%d: %q is not a header name (letters, digits and !#$%%&'*+-.^_`|~ only), write it as 'Name: value'", i+1, name)
		}
		if value == "" {
			return nil, fmt.Errorf("--header %s has no value (an unset environment variable?): write it as 'Name: value'", name)
		}
		if strings.ContainsFunc(value, func(r rune) bool { return r != '\t' && (r < ' ' || r == 0x7f) }) {
			return nil, fmt.Errorf("--header %s: the value holds a line break or another control character", name)
		}
		if reservedHeader(name) {
			return nil, fmt.Errorf("--header %s: webmcp-cdp sets this header itself; pass only headers such as Authorization or a service's API key header", name)
		}
		h.Add(name, value)
	}
	return h, nil
}

// validHeaderName reports whether name is an HTTP token (RFC 9110 5.6.2).
func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case strings.ContainsRune("!#$%&'*+-.^_`|~", r):
		default:
			return false
		}
	}
	return true
}

// reservedHeader reports whether the HTTP client or the WebSocket
// handshake owns the header.
func reservedHeader(name string) bool {
	switch http.CanonicalHeaderKey(name) {
	case "Host", "Connection", "Upgrade", "Content-Length", "Transfer-Encoding", "Te", "Trailer", "Keep-Alive":
		return true
	}
	return strings.HasPrefix(http.CanonicalHeaderKey(name), "Sec-Websocket-")
}

// TLSConfigWithCA returns a TLS configuration that trusts the system roots
// and the certificates of the PEM file (--ca-file), for a browser service
// behind a private certificate authority.
func TLSConfigWithCA(pemFile string) (*tls.Config, error) {
	data, err := os.ReadFile(pemFile)
	if err != nil {
		return nil, fmt.Errorf("--ca-file: %w", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool() // Windows before Go 1.18, or no roots
	}
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("--ca-file %s holds no PEM certificate (a file with -----BEGIN CERTIFICATE----- blocks)", pemFile)
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, nil
}

// secretParam reports whether a query parameter holds a secret by its
// name: token, apiKey, key, auth and their kin (access_token, api_key,
// password, secret).
func secretParam(name string) bool {
	n := strings.ToLower(name)
	for _, s := range []string{"token", "key", "auth", "secret", "pass", "credential", "sig"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// redacted stands for a secret in a URL that is shown.
const redacted = "REDACTED"

// RedactURL returns the URL fit for a log line, an error or the status
// page: its user information and the values of query parameters named like
// secrets (token, apiKey, key, auth, ...) are replaced by REDACTED.
func RedactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(an endpoint URL that does not parse)"
	}
	return redactURL(u)
}

func redactURL(u *url.URL) string {
	r := *u
	if r.User != nil {
		r.User = url.User(redacted)
	}
	if r.RawQuery != "" {
		q, err := url.ParseQuery(r.RawQuery)
		if err != nil {
			r.RawQuery = redacted
		} else {
			for k, vs := range q {
				if secretParam(k) {
					for i := range vs {
						vs[i] = redacted
					}
				}
			}
			r.RawQuery = q.Encode()
		}
	}
	r.Fragment, r.RawFragment = "", ""
	return r.String()
}

// wsFromVersion turns the webSocketDebuggerUrl that given's /json/version
// returned into the URL to dial. Services behind a proxy answer with their
// internal address: when the hosts differ, the host (and the path prefix)
// given win. The scheme follows given's (https makes wss), and given's
// query parameters (a service's token) are added where the returned URL
// lacks them.
func wsFromVersion(given *url.URL, returned string) (*url.URL, error) {
	w, err := url.Parse(returned)
	if err != nil || (w.Scheme != "ws" && w.Scheme != "wss") || w.Host == "" {
		return nil, fmt.Errorf("%s gave a webSocketDebuggerUrl that is not a ws:// URL: %s", redactURL(given), RedactURL(returned))
	}
	w.Scheme = "ws"
	if given.Scheme == "https" {
		w.Scheme = "wss"
	}
	if !strings.EqualFold(w.Host, given.Host) {
		w.Host = given.Host
		if prefix := strings.TrimSuffix(given.Path, "/"); prefix != "" && !strings.HasPrefix(w.Path, prefix+"/") {
			w.Path = prefix + w.Path
			w.RawPath = ""
		}
	}
	if given.RawQuery != "" {
		q := w.Query()
		for k, vs := range given.Query() {
			if _, ok := q[k]; !ok {
				q[k] = vs
			}
		}
		w.RawQuery = q.Encode()
	}
	return w, nil
}

// refusedError words a 401 or 403 answer of the endpoint.
func refusedError(what string, status int) error {
	return fmt.Errorf("%s refused the connection (%d %s): the endpoint needs credentials; check --header (e.g. --header 'Authorization: Bearer TOKEN', or WEBMCP_CDP_HEADER) and the token in the URL",
		what, status, http.StatusText(status))
}

// plainErr strips the URL that net/http puts in its errors (it may hold a
// token); the caller names the endpoint, redacted. A certificate the
// system does not trust gets the way out: --ca-file.
func plainErr(err error) error {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		err = ue.Err
	}
	_, unknownCA := errors.AsType[x509.UnknownAuthorityError](err)
	_, verify := errors.AsType[*tls.CertificateVerificationError](err)
	if unknownCA || verify {
		return fmt.Errorf("%w (if the endpoint's certificate is signed by a private authority, trust it with --ca-file FILE.pem)", err)
	}
	return err
}
