package main

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/webmcp-cdp/webmcp-cdp/cmd/webmcp-cdp/cli"
)

// parseNamed parses args as attach's endpoint flags, applies env and the
// config file text, and returns --browser's endpoints.
func parseNamed(t *testing.T, args []string, env map[string]string, file string) ([]cli.NamedEndpoint, error) {
	t.Helper()
	root := &cobra.Command{Use: "root"}
	root.PersistentFlags().String(cli.ConfigFlag, "", "")
	cmd := &cobra.Command{Use: "attach", RunE: func(*cobra.Command, []string) error { return nil }}
	var ef endpointFlags
	ef.register(cmd)
	root.AddCommand(cmd)
	args = withConfigFile(t, args, file)
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	if err := cli.ApplyConfig(cmd, func(k string) string { return env[k] }); err != nil {
		return nil, err
	}
	return ef.named()
}

func TestNamedBrowsers(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		env     map[string]string
		file    string
		want    string // name:url:header, space-separated
		wantErr string
	}{
		{name: "none", want: ""},
		{
			name: "http and wss, in order",
			args: []string{"--browser", "desk=http://127.0.0.1:9222", "--browser", "bl=wss://bl.example/chromium?token=T"},
			want: "desk:url=http://127.0.0.1:9222: bl:ws=wss://bl.example/chromium?token=T:",
		},
		{
			name: "a header for one browser only",
			args: []string{"--browser", "a=http://a:1", "--browser", "b=https://b:2", "--browser-header", "b=Authorization: Bearer X"},
			want: "a:url=http://a:1: b:url=https://b:2:Bearer X",
		},
		{
			name: "from the environment, headers one per line",
			env: map[string]string{"WEBMCP_CDP_BROWSER": "a=http://a:1 b=ws://b:2/devtools/browser/x",
				"WEBMCP_CDP_BROWSER_HEADER": "a=Authorization: Bearer A\nb=Authorization: Bearer B"},
			want: "a:url=http://a:1:Bearer A b:ws=ws://b:2/devtools/browser/x:Bearer B",
		},
		{
			name: "from a config file's lists",
			file: "browser:\n  - grid=ws://grid:4444/session/1/se/cdp\n  - desk=http://127.0.0.1:9222\nbrowser-header:\n  - 'desk=Authorization: Bearer D'\n",
			want: "grid:ws=ws://grid:4444/session/1/se/cdp: desk:url=http://127.0.0.1:9222:Bearer D",
		},
		{name: "no name", args: []string{"--browser", "http://127.0.0.1:9222/?token=SECRET1"}, wantErr: "give NAME=URL"},
		{name: "a bad name", args: []string{"--browser", "Desk=http://a:1"}, wantErr: "browser name \"Desk\""},
		{name: "a name twice", args: []string{"--browser", "a=http://a:1", "--browser", "a=http://b:1"}, wantErr: "given twice"},
		{name: "no host", args: []string{"--browser", "a=http:///x"}, wantErr: "the URL does not parse"},
		{name: "another scheme", args: []string{"--browser", "a=ftp://a:1"}, wantErr: "must start with http://"},
		{name: "a header for no browser", args: []string{"--browser", "a=http://a:1", "--browser-header", "z=X-Y: 1"}, wantErr: "one of the --browser names (a)"},
		{name: "a header without --browser", args: []string{"--browser-header", "a=X-Y: 1"}, wantErr: "needs --browser"},
		{name: "a header that is not one", args: []string{"--browser", "a=http://a:1", "--browser-header", "a=Bearer X"}, wantErr: "--browser-header a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eps, err := parseNamed(t, tc.args, tc.env, tc.file)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one with %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "SECRET1") {
					t.Errorf("the error shows the token: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range eps {
				s := e.Name + ":"
				if e.Endpoint.BrowserURL != "" {
					s += "url=" + e.Endpoint.BrowserURL
				} else {
					s += "ws=" + e.Endpoint.WSEndpoint
				}
				_, bearer, _ := strings.Cut(e.Endpoint.Header.Get("Authorization"), "Bearer ")
				if bearer != "" {
					bearer = "Bearer " + bearer
				}
				got = append(got, s+":"+bearer)
			}
			if g := strings.Join(got, " "); g != tc.want {
				t.Errorf("got %q, want %q", g, tc.want)
			}
		})
	}
}
