package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/webmcp-cdp/webmcp-cdp/cmd/webmcp-cdp/cli"
)

func TestGridFlags(t *testing.T) {
	for _, tc := range []struct {
		name    string
		flags   gridFlags
		lf      launchFlags
		env     map[string]string
		wantErr string
		check   func(t *testing.T, url string, caps map[string]any, auth string)
	}{
		{name: "no Grid", check: nil},
		{name: "from the environment, as Playwright reads it",
			env: map[string]string{
				envSeleniumURL:          "http://grid:4444/wd/hub",
				envSeleniumCapabilities: `{"platformName": "linux", "se:name": "x"}`,
				envSeleniumHeaders:      `{"Authorization": "Basic dTpw"}`,
			},
			check: func(t *testing.T, url string, caps map[string]any, auth string) {
				if url != "http://grid:4444/wd/hub" || caps["platformName"] != "linux" || auth != "Basic dTpw" {
					t.Errorf("url %s, caps %v, auth %q", url, caps, auth)
				}
			}},
		{name: "flags win over the environment",
			flags: gridFlags{url: "http://a:4444", capabilities: `{"browserName": "chrome"}`, headers: []string{"X-Key: k"}},
			env:   map[string]string{envSeleniumURL: "http://b:4444", envSeleniumHeaders: `{"Authorization": "Basic dTpw"}`},
			check: func(t *testing.T, url string, caps map[string]any, auth string) {
				if url != "http://a:4444" || auth != "" {
					t.Errorf("url %s, auth %q", url, auth)
				}
			}},
		{name: "capabilities without a Grid", flags: gridFlags{capabilities: "{}"}, wantErr: "need --selenium URL"},
		{name: "not http", flags: gridFlags{url: "ws://grid:4444"}, wantErr: "give the Grid's http(s):// address"},
		{name: "capabilities not an object", flags: gridFlags{url: "http://g:4444"}, env: map[string]string{envSeleniumCapabilities: "  "}, wantErr: "not a JSON object"},
		{name: "capabilities a list", flags: gridFlags{url: "http://g:4444", capabilities: `[1]`}, wantErr: "not a JSON object"},
		{name: "two objects", flags: gridFlags{url: "http://g:4444", capabilities: `{} {}`}, wantErr: "more than one JSON value"},
		{name: "headers not strings", flags: gridFlags{url: "http://g:4444"}, env: map[string]string{envSeleniumHeaders: `{"A": 1}`}, wantErr: "its values must be strings"},
		{name: "bad header", flags: gridFlags{url: "http://g:4444", headers: []string{"no colon"}}, wantErr: "has no colon"},
		{name: "a local browser", flags: gridFlags{url: "http://g:4444"}, lf: launchFlags{chrome: "/bin/chrome"}, wantErr: "on a Grid the node does"},
		{name: "a local profile", flags: gridFlags{url: "http://g:4444"}, lf: launchFlags{userDataDir: "/tmp/p"}, wantErr: "each Grid session has a profile of its own"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts, err := tc.flags.grid(func(k string) string { return tc.env[k] }, &tc.lf, tc.lf.options(""))
			switch {
			case tc.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				if ee, ok := err.(*cli.ExitError); !ok || ee.Code != 2 {
					t.Errorf("err = %#v, want exit code 2", err)
				}
				if strings.Contains(err.Error(), "dTpw") {
					t.Errorf("the error shows a credential: %v", err)
				}
			case err != nil:
				t.Fatal(err)
			case tc.check == nil && opts != nil:
				t.Fatalf("a Grid without --selenium or %s: %+v", envSeleniumURL, opts)
			case tc.check != nil:
				if opts == nil {
					t.Fatal("no Grid")
				}
				tc.check(t, opts.URL.String(), opts.Capabilities, opts.Header.Get("Authorization"))
				if len(opts.Args) == 0 || opts.Tag.PID == 0 {
					t.Errorf("no browser flags or tag: %+v", opts)
				}
			}
		})
	}
}

// TestGridConfigFile: the Grid's flags come from a config file like every
// other flag.
func TestGridConfigFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "webmcp.yaml")
	yaml := "selenium: http://grid:4444\nbrowsers: 2\nselenium-capabilities: '{\"platformName\": \"linux\"}'\nselenium-header: ['Authorization: Basic dTpw']\n"
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd, _, err := newRoot().Find([]string{"launch"})
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.ParseFlags([]string{"--config", path}); err != nil {
		t.Fatal(err)
	}
	if err := cli.ApplyConfig(cmd, func(string) string { return "" }); err != nil {
		t.Fatal(err)
	}
	fs := cmd.Flags()
	url, _ := fs.GetString("selenium")
	n, _ := fs.GetInt("browsers")
	caps, _ := fs.GetString("selenium-capabilities")
	headers, _ := fs.GetStringArray("selenium-header")
	if url != "http://grid:4444" || n != 2 || caps != `{"platformName": "linux"}` || len(headers) != 1 {
		t.Errorf("from the file: selenium %q, browsers %d, capabilities %q, headers %q", url, n, caps, headers)
	}
}
