package record

import (
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestRedactURL: the secrets of a URL become placeholders, the rest stays
// as it was, and the URL still parses.
func TestRedactURL(t *testing.T) {
	tests := []struct {
		name   string
		raw    string
		escape bool
		want   string
		names  []string
		values map[string]string // placeholder -> the value it stands for
	}{
		{
			name: "no secrets: as it was",
			raw:  "https://shop.example/a%20b/?q=lamp&n=3#top",
			want: "https://shop.example/a%20b/?q=lamp&n=3#top",
		},
		{
			name:   "query parameters by the names of arguments",
			raw:    "https://shop.example/cb?code=abc&access_token=tok%2B123&api-key=k&q=lamp",
			want:   "https://shop.example/cb?code=abc&access_token=${ACCESS_TOKEN}&api-key=${API_KEY}&q=lamp",
			names:  []string{"ACCESS_TOKEN", "API_KEY"},
			values: map[string]string{"ACCESS_TOKEN": "tok%2B123", "API_KEY": "k"},
		},
		{
			name: "fragment parameters of an implicit grant",
			raw:  "https://app.example/#access_token=ya29.abc&token_type=Bearer&state=xyz",
			// token_type looks like a secret's name too: the rule is the
			// arguments' one.
			want:   "https://app.example/#access_token=${ACCESS_TOKEN}&token_type=${TOKEN_TYPE}&state=xyz",
			names:  []string{"ACCESS_TOKEN", "TOKEN_TYPE"},
			values: map[string]string{"ACCESS_TOKEN": "ya29.abc"},
		},
		{
			name:   "fragment after a single-page app's route",
			raw:    "https://app.example/#/callback?id_token=eyJ.x.y&x=1",
			want:   "https://app.example/#/callback?id_token=${ID_TOKEN}&x=1",
			names:  []string{"ID_TOKEN"},
			values: map[string]string{"ID_TOKEN": "eyJ.x.y"},
		},
		{
			name:   "userinfo, braces escaped for a page URL",
			raw:    "https://ann:hunter22@intranet.example/wiki?password=pw0000",
			escape: true,
			want:   "https://$%7BURL_USER%7D:$%7BURL_PASSWORD%7D@intranet.example/wiki?password=${PASSWORD}",
			names:  []string{"URL_USER", "URL_PASSWORD", "PASSWORD"},
			values: map[string]string{"URL_USER": "ann", "URL_PASSWORD": "hunter22", "PASSWORD": "pw0000"},
		},
		{
			name:   "userinfo of an argument's URL",
			raw:    "https://ghp_abcdef@git.example/repo.git",
			want:   "https://${URL_USER}@git.example/repo.git",
			names:  []string{"URL_USER"},
			values: map[string]string{"URL_USER": "ghp_abcdef"},
		},
		{
			name:   "a path and query of the page",
			raw:    "/reset?token=r-7777",
			want:   "/reset?token=${TOKEN}",
			names:  []string{"TOKEN"},
			values: map[string]string{"TOKEN": "r-7777"},
		},
		{
			name: "an empty secret and a name alone stay",
			raw:  "https://shop.example/?token=&password#secret",
			want: "https://shop.example/?token=&password#secret",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var s secrets
			got, names := s.redactURL(tc.raw, tc.escape)
			if got != tc.want || !slices.Equal(names, tc.names) {
				t.Errorf("redactURL(%q) = %q %v, want %q %v", tc.raw, got, names, tc.want, tc.names)
			}
			if tc.escape || !strings.Contains(got, "@") {
				if _, err := url.Parse(got); err != nil {
					t.Errorf("the redacted URL does not parse: %v", err)
				}
			}
			for name, v := range tc.values {
				if s.values[name] != v {
					t.Errorf("%s stands for %q, want %q", name, s.values[name], v)
				}
			}
		})
	}
}

// TestRedactArgsAndResults: URLs in arguments lose their secrets, and the
// secrets of URLs in a result's text are taken out of it.
func TestRedactArgsAndResults(t *testing.T) {
	tests := []struct {
		name           string
		args           any
		want           any
		text, scrubbed string
	}{
		{
			name: "a URL argument",
			args: map[string]any{"url": "https://x.example/?session_id=s-123456", "n": int64(1)},
			want: map[string]any{"url": "https://x.example/?session_id=${SESSION_ID}", "n": int64(1)},
		},
		{
			name: "words are not URLs",
			args: []any{"see /help?token=x now", "?"},
			want: []any{"see /help?token=x now", "?"},
		},
		{
			name:     "a URL in a result",
			text:     `{"next":"https://x.example/cb#access_token=tok-98765&state=1"} and again tok-98765.`,
			scrubbed: `{"next":"https://x.example/cb#access_token=${ACCESS_TOKEN}&state=1"} and again ${ACCESS_TOKEN}.`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var s secrets
			if tc.args != nil {
				if got := s.redact(tc.args, nil); !reflect.DeepEqual(got, tc.want) {
					t.Errorf("redact = %#v, want %#v", got, tc.want)
				}
			}
			if tc.text != "" {
				s.learnURLs(tc.text)
				if got := s.scrub(tc.text); got != tc.scrubbed {
					t.Errorf("scrub = %q, want %q", got, tc.scrubbed)
				}
			}
		})
	}
}
