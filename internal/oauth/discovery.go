package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// issuer is one configured authorization server.
type issuer struct {
	id   string
	meta issuerMeta
	keys *keySet // nil when the metadata names no jwks_uri
}

// issuerMeta is what this server reads of an authorization server's
// metadata (RFC 8414 §2; OpenID Connect Discovery 1.0 §3).
type issuerMeta struct {
	Issuer                string `json:"issuer"`
	JWKSURI               string `json:"jwks_uri"`
	IntrospectionEndpoint string `json:"introspection_endpoint"`
}

// metadataURLs are where an issuer's metadata may be, in the order the MCP
// authorization spec tries them: RFC 8414 (path inserted), OpenID discovery
// with the path inserted, then appended.
func metadataURLs(id string) ([]string, error) {
	u, err := url.Parse(id)
	if err != nil || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("OAuth issuer %q: give its issuer URL, such as https://login.example.com/realms/main", id)
	}
	if err := checkFetchURL(u); err != nil {
		return nil, fmt.Errorf("OAuth issuer %q: %w", id, err)
	}
	path := strings.TrimSuffix(u.Path, "/")
	at := func(p string) string { c := *u; c.Path = p; return c.String() }
	if path == "" {
		return []string{at("/.well-known/oauth-authorization-server"), at("/.well-known/openid-configuration")}, nil
	}
	return []string{
		at("/.well-known/oauth-authorization-server" + path),
		at("/.well-known/openid-configuration" + path),
		at(path + "/.well-known/openid-configuration"),
	}, nil
}

// checkFetchURL allows https, and http on loopback only (tests, a local
// identity provider).
func checkFetchURL(u *url.URL) error {
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		h := u.Hostname()
		if ip := net.ParseIP(h); h == "localhost" || (ip != nil && ip.IsLoopback()) {
			return nil
		}
		return errors.New("plain http is allowed for loopback addresses only: use https")
	}
	return fmt.Errorf("scheme %q: use https", u.Scheme)
}

// discover reads an issuer's metadata from the first well-known URL that
// has it, and checks that it names the issuer itself (RFC 8414 §3.3).
func discover(ctx context.Context, c *http.Client, id string) (*issuer, error) {
	urls, err := metadataURLs(id)
	if err != nil {
		return nil, err
	}
	var tried []string
	for _, mu := range urls {
		var m issuerMeta
		status, err := getJSON(ctx, c, mu, &m)
		if err != nil {
			return nil, fmt.Errorf("OAuth issuer %s: reading its metadata: %w", id, err)
		}
		if status != http.StatusOK {
			tried = append(tried, fmt.Sprintf("%s (%d)", mu, status))
			continue
		}
		if m.Issuer != id {
			return nil, fmt.Errorf("OAuth issuer %s: its metadata at %s names the issuer %q; give --oauth-issuer exactly as the server names itself", id, mu, m.Issuer)
		}
		for name, v := range map[string]string{"jwks_uri": m.JWKSURI, "introspection_endpoint": m.IntrospectionEndpoint} {
			if v == "" {
				continue
			}
			u, err := url.Parse(v)
			if err == nil {
				err = checkFetchURL(u)
			}
			if err != nil {
				return nil, fmt.Errorf("OAuth issuer %s: its %s %q: %v", id, name, v, err)
			}
		}
		if m.JWKSURI == "" && m.IntrospectionEndpoint == "" {
			return nil, fmt.Errorf("OAuth issuer %s: its metadata names neither a jwks_uri nor an introspection_endpoint, so no token of it could be checked", id)
		}
		return &issuer{id: id, meta: m}, nil
	}
	return nil, fmt.Errorf("OAuth issuer %s: no metadata found at %s; check the issuer URL", id, strings.Join(tried, ", "))
}

// getJSON GETs u into v when the answer is 200; other statuses are returned
// without error for the caller to judge. The body is bounded.
func getJSON(ctx context.Context, c *http.Client, u string, v any) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, maxDocBytes))
		return resp.StatusCode, nil
	}
	if err := decodeBounded(resp.Body, v); err != nil {
		return 0, fmt.Errorf("%s: %w", u, err)
	}
	return http.StatusOK, nil
}

// decodeBounded decodes one JSON document of at most maxDocBytes.
func decodeBounded(r io.Reader, v any) error {
	body, err := io.ReadAll(io.LimitReader(r, maxDocBytes+1))
	if err != nil {
		return err
	}
	if len(body) > maxDocBytes {
		return fmt.Errorf("the document is larger than %d bytes", maxDocBytes)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("not a JSON document: %w", err)
	}
	return nil
}
