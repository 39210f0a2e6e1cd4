package main

import (
	"strings"
	"testing"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/cdp"
	"github.com/webmcp-cdp/webmcp-cdp/cdp/browsers"
)

// TestAutoConnectSource checks how attach's flags become its browser
// source: the endpoint given, else browsers.AutoConnect with the flags'
// values.
func TestAutoConnectSource(t *testing.T) {
	tests := []struct {
		name     string
		flags    autoConnectFlags
		ep       cdp.Endpoint
		wantAuto *browsers.AutoConnect // nil: the endpoint's source
		wantErr  string
	}{
		{name: "endpoint", flags: autoConnectFlags{timeout: time.Minute}, ep: cdp.Endpoint{BrowserURL: "http://127.0.0.1:9222"}},
		{name: "ws endpoint", flags: autoConnectFlags{timeout: time.Minute}, ep: cdp.Endpoint{WSEndpoint: "ws://127.0.0.1:9222/devtools/browser/x"}},
		{name: "nothing named", flags: autoConnectFlags{timeout: time.Minute}, wantAuto: &browsers.AutoConnect{Timeout: time.Minute, Implicit: true}},
		{name: "--auto-connect", flags: autoConnectFlags{on: true, channel: "beta", timeout: 5 * time.Second}, wantAuto: &browsers.AutoConnect{Channel: "beta", Timeout: 5 * time.Second}},
		{name: "--user-data-dir", flags: autoConnectFlags{on: true, userDataDir: "/p", timeout: time.Minute}, wantAuto: &browsers.AutoConnect{UserDataDir: "/p", Timeout: time.Minute}},
		{name: "zero timeout", flags: autoConnectFlags{on: true}, wantErr: "--connect-timeout 0s: must be positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src, err := tt.flags.source(tt.ep)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v; want one saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantAuto == nil {
				if _, ok := src.(*browsers.Connect); !ok {
					t.Fatalf("source %T; want the endpoint's *browsers.Connect", src)
				}
				return
			}
			got, ok := src.(*browsers.AutoConnect)
			if !ok {
				t.Fatalf("source %T; want *browsers.AutoConnect", src)
			}
			if *got != *tt.wantAuto {
				t.Errorf("source %+v; want %+v", *got, *tt.wantAuto)
			}
		})
	}
}
