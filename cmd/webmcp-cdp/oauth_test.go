package main

import (
	"strings"
	"testing"
	"time"
)

// TestOAuthFlagsCheck: OAuth mode's flags are refused when they do not fit,
// with a message that says what to do.
func TestOAuthFlagsCheck(t *testing.T) {
	base := func() oauthFlags {
		return oauthFlags{issuers: []string{"https://login.example.com"}, readScope: "webmcp:read", callScope: "webmcp:call", skew: 30 * time.Second, refetch: 10 * time.Second}
	}
	tests := []struct {
		name     string
		change   func(f *oauthFlags)
		addr     string
		loopback bool
		token    string
		wantErr  string
	}{
		{name: "loopback", addr: "127.0.0.1:8808", loopback: true},
		{name: "public with --public-url", addr: "0.0.0.0:8808", change: func(f *oauthFlags) { f.publicURL = "https://hub.example.com/mcp" }},
		{name: "public without --public-url", addr: "0.0.0.0:8808", wantErr: "give --public-url"},
		{name: "with --token", addr: "127.0.0.1:8808", loopback: true, token: "s", wantErr: "both set"},
		{name: "without --http", wantErr: "give --http too"},
		{name: "bad --public-url", addr: "127.0.0.1:8808", loopback: true, change: func(f *oauthFlags) { f.publicURL = "hub.example.com/mcp" }, wantErr: "--public-url"},
		{name: "client id without secret", addr: "127.0.0.1:8808", loopback: true, change: func(f *oauthFlags) { f.clientID = "rs" }, wantErr: "go together"},
		{name: "same scopes", addr: "127.0.0.1:8808", loopback: true, change: func(f *oauthFlags) { f.callScope = f.readScope }, wantErr: "two different scope names"},
		{name: "scope with a space", addr: "127.0.0.1:8808", loopback: true, change: func(f *oauthFlags) { f.callScope = "a b" }, wantErr: "two different scope names"},
		{name: "skew too large", addr: "127.0.0.1:8808", loopback: true, change: func(f *oauthFlags) { f.skew = time.Hour }, wantErr: "between 0s and 5m"},
		{name: "refetch too often", addr: "127.0.0.1:8808", loopback: true, change: func(f *oauthFlags) { f.refetch = time.Millisecond }, wantErr: "at least 1s"},
		{name: "--public-url without an issuer", change: func(f *oauthFlags) { f.issuers = nil; f.publicURL = "https://x/mcp" }, wantErr: "give --oauth-issuer too"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := base()
			if tt.change != nil {
				tt.change(&f)
			}
			err := f.check(tt.addr, tt.loopback, tt.token)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("check = %v, want %q", err, tt.wantErr)
			}
		})
	}
}
