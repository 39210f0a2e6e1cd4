package main

import (
	"strings"
	"testing"

	"github.com/webmcp-cdp/webmcp-cdp/cmd/webmcp-cdp/cli"
)

func TestCheckRepeats(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string // "" for no error; else a part of the error
	}{
		{"once each", []string{"attach", "--browser-url", "http://a", "--call-timeout", "5s"}, ""},
		{"repeatable twice", []string{"launch", "--chrome-arg", "--a", "--chrome-arg=--b", "--headless"}, ""},
		{"browser twice", []string{"attach", "--browser", "a=http://a", "--browser", "b=http://b"}, ""},
		{"browser-url twice", []string{"attach", "--browser-url", "http://a", "--browser-url=http://b"}, "--browser-url is given 2 times but takes one value (the last would silently win): use --browser NAME=URL"},
		{"ws-endpoint twice", []string{"attach", "--ws-endpoint", "ws://a", "--ws-endpoint", "ws://b"}, "use --browser NAME=URL"},
		{"persistent flag twice", []string{"--log-level", "debug", "launch", "--log-level", "warn"}, "--log-level is given 2 times but takes one value (the last would silently win): give it once"},
		{"bool twice", []string{"launch", "--headless", "--headless=false"}, "--headless is given 2 times"},
		{"after --, not a flag", []string{"launch", "--headless", "--", "--headless"}, ""},
		{"unknown flags are cobra's", []string{"launch", "--nope", "--nope"}, ""},
		{"no command", []string{"--version"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := cli.CheckRepeats(newRoot(), tc.args)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("cli.CheckRepeats(%q) = %v, want nil", tc.args, err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("cli.CheckRepeats(%q) = %v, want an error with %q", tc.args, err, tc.want)
			case tc.want != "":
				if ee, ok := err.(*cli.ExitError); !ok || ee.Code != 2 {
					t.Fatalf("cli.CheckRepeats(%q) = %#v, want exit code 2", tc.args, err)
				}
				if strings.Contains(err.Error(), "http://") || strings.Contains(err.Error(), "ws://") {
					t.Fatalf("the error repeats a value (which may hold a token): %v", err)
				}
			}
		})
	}
}
