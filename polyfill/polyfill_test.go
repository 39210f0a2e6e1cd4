package polyfill

import (
	"strings"
	"testing"
)

func TestScript(t *testing.T) {
	tests := []struct {
		name    string
		opts    Options
		wantErr string
		want    []string
	}{
		{name: "fills placeholders", opts: Options{Nonce: "abc123", Binding: "__ping_x", Backend: BackendNative},
			want: []string{"'abc123'", "'__ping_x'", "'native'"}},
		{name: "default backend", opts: Options{Nonce: "n", Binding: "b"}, want: []string{"'auto'"}},
		{name: "quote in nonce", opts: Options{Nonce: "a'b", Binding: "b"}, wantErr: "characters outside"},
		{name: "empty binding", opts: Options{Nonce: "a"}, wantErr: "characters outside"},
		{name: "bad backend", opts: Options{Nonce: "a", Binding: "b", Backend: "magic"}, wantErr: "unknown backend"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Script(tt.opts)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Script() error = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(got, "__WEBMCP_CDP_") {
				t.Error("a placeholder is left in the script")
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("script lacks %s", w)
				}
			}
		})
	}
}

func TestParseBackend(t *testing.T) {
	for _, s := range []string{"auto", "polyfill", "native"} {
		if b, err := ParseBackend(s); err != nil || string(b) != s {
			t.Errorf("ParseBackend(%q) = %q, %v", s, b, err)
		}
	}
	if _, err := ParseBackend("chrome"); err == nil {
		t.Error("ParseBackend(chrome) accepted an unknown backend")
	}
}
