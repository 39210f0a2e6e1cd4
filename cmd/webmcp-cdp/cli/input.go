package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
)

// This file words what a person typed back to them: start URLs without a
// scheme, and JSON with the line and column of its error.

// opaqueSchemes are schemes written without "//" (a func: no package-level
// mutable state).
func opaqueSchemes() []string {
	return []string{"about:", "data:", "blob:", "file:", "chrome:", "edge:", "view-source:", "javascript:"}
}

// StartURL returns the URL to open for s: as given when it has a scheme;
// with http:// added when it names a loopback host (localhost:8080/app,
// 127.0.0.1, [::1], *.localhost); an error saying to add the scheme
// otherwise.
func StartURL(s string) (string, error) {
	t := strings.TrimSpace(s)
	lower := strings.ToLower(t)
	if strings.Contains(t, "://") {
		if u, err := url.Parse(t); err != nil || u.Host == "" && u.Scheme != "file" {
			return "", fmt.Errorf("start URL %q is not a valid URL", s)
		}
		return t, nil
	}
	for _, p := range opaqueSchemes() {
		if strings.HasPrefix(lower, p) {
			return t, nil
		}
	}
	host := t
	if i := strings.IndexAny(host, "/?#"); i >= 0 {
		host = host[:i]
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.ToLower(strings.Trim(host, "[]"))
	if host == "" {
		return "", fmt.Errorf("start URL %q has no host: give a full URL such as https://example.com/", s)
	}
	loopback := host == "localhost" || strings.HasSuffix(host, ".localhost")
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		loopback = true
	}
	if !loopback {
		return "", fmt.Errorf("start URL %q has no scheme: add https:// (or http://)", s)
	}
	return "http://" + t, nil
}

// StartURLs applies StartURL to each URL.
func StartURLs(urls []string) ([]string, error) {
	out := make([]string, len(urls))
	for i, u := range urls {
		var err error
		if out[i], err = StartURL(u); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// JSONAt adds the line and column of a JSON error in data to err's text.
func JSONAt(data []byte, err error) string {
	// Offset counts the bytes read, the bad one included.
	var off int64 = -1
	msg := err.Error()
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset - 1
		if strings.HasPrefix(se.Error(), "unexpected end") { // point past the end
			off = int64(len(data))
		}
	case errors.As(err, &te):
		off = te.Offset - 1
		msg = "a JSON " + te.Value + " where an object is needed"
	}
	if off < 0 {
		return msg
	}
	line, col := 1, 1
	for _, c := range data[:min(int(off), len(data))] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return fmt.Sprintf("line %d, column %d: %s", line, col, msg)
}

// DecodeObject reads a JSON object, alone, into v.
func DecodeObject(s string, v any) error {
	if !strings.HasPrefix(strings.TrimSpace(s), "{") {
		return errors.New("not a JSON object: give {\"name\": value, ...}")
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("not a JSON object: %w", err)
	}
	if dec.More() {
		return errors.New("more than one JSON value: give one object")
	}
	return nil
}

// OutputFormats are the values of inspect's and test's --format.
func OutputFormats() []string { return []string{"text", "json"} }

// CheckFormat checks a --format value.
func CheckFormat(format string) error {
	if !slices.Contains(OutputFormats(), format) {
		return Usage(fmt.Errorf("--format %q: use text or json", format))
	}
	return nil
}

// CheckPageURL refuses what a browser would not load as a page address.
func CheckPageURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return Usage(fmt.Errorf("URL %q: %w", raw, err))
	}
	if !u.IsAbs() {
		return Usage(fmt.Errorf("URL %q is not absolute: give the whole address, such as http://127.0.0.1:8080/app/", raw))
	}
	return nil
}
