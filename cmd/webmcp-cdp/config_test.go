package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/webmcp-cdp/webmcp-cdp/cmd/webmcp-cdp/cli"
)

// configCmd is a small command tree with flags of each kind, and a sibling
// command whose flag a shared config file may name.
type configCmd struct {
	timeout time.Duration
	n       int
	on      bool
	name    string
	origins []string
	hosts   []string
	size    cli.Viewport
	token   string
	headers []string
}

func newConfigCmd(c *configCmd) *cobra.Command {
	root := &cobra.Command{Use: "root"}
	root.PersistentFlags().String(cli.ConfigFlag, "", "")
	root.PersistentFlags().String("log-level", "info", "")
	cmd := &cobra.Command{Use: "serve", RunE: func(*cobra.Command, []string) error { return nil }}
	fs := cmd.Flags()
	fs.DurationVar(&c.timeout, "call-timeout", 30*time.Second, "")
	fs.IntVar(&c.n, "max-tools", 200, "")
	fs.BoolVar(&c.on, "headless", false, "")
	fs.StringVar(&c.name, "user-agent", "", "")
	fs.StringArrayVar(&c.origins, "allow-origin", nil, "")
	fs.StringSliceVar(&c.hosts, "allowed-host", nil, "")
	fs.Var(&c.size, "viewport", "")
	fs.StringVar(&c.token, "relay-token", "", "")
	fs.StringArrayVar(&c.headers, "header", nil, "")
	other := &cobra.Command{Use: "other"}
	other.Flags().String("browser-url", "", "")
	root.AddCommand(cmd, other)
	return cmd
}

// runConfig parses args as the command line of serve, then applies env and
// the config file text (YAML or JSON; none when empty).
func runConfig(t *testing.T, args []string, env map[string]string, file string) (*configCmd, error) {
	t.Helper()
	var c configCmd
	cmd := newConfigCmd(&c)
	args = withConfigFile(t, args, file)
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatal(err)
	}
	return &c, cli.ApplyConfig(cmd, func(k string) string { return env[k] })
}

func TestConfigSources(t *testing.T) {
	c, err := runConfig(t, []string{"--call-timeout", "5s"},
		map[string]string{"WEBMCP_CDP_RELAY_TOKEN": "jwt", "WEBMCP_CDP_CALL_TIMEOUT": "7s", "WEBMCP_CDP_MAX_TOOLS": "9", "WEBMCP_CDP_ALLOW_ORIGIN": "https://a.test https://b.test"},
		"call-timeout: 1s\nmax-tools: 3\nheadless: true\nuser-agent: Bot/1\nallowed-host: [x.test, y.test]\nviewport: 800x600\nbrowser-url: http://127.0.0.1:9222\n")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		what      string
		got, want any
	}{
		{"the command line wins over env and file", c.timeout, 5 * time.Second},
		{"env wins over the file", c.n, 9},
		{"the file fills a bool", c.on, true},
		{"the file fills a string", c.name, "Bot/1"},
		{"env splits a repeatable flag on spaces", strings.Join(c.origins, "|"), "https://a.test|https://b.test"},
		{"the file gives a list", strings.Join(c.hosts, "|"), "x.test|y.test"},
		{"a custom value", c.size.String(), "800x600"},
		{"the relay token's variable is left to the relay code", c.token, ""},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.what, tc.got, tc.want)
		}
	}
}

// TestConfigHeaders checks that --header values, which hold spaces, come
// one per line from the environment and one per element from the file.
func TestConfigHeaders(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  string
		file string
		want []string
	}{
		{name: "env, one", env: "Authorization: Bearer s3cret", want: []string{"Authorization: Bearer s3cret"}},
		{name: "env, one per line", env: "Authorization: Bearer s3cret\nX-Api-Key: k 1\n\n", want: []string{"Authorization: Bearer s3cret", "X-Api-Key: k 1"}},
		{name: "file list", file: "header:\n  - 'Authorization: Bearer s3cret'\n  - 'X-A: 1'\n", want: []string{"Authorization: Bearer s3cret", "X-A: 1"}},
		{name: "file scalar", file: "header: 'X-A: b c'\n", want: []string{"X-A: b c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := runConfig(t, nil, map[string]string{"WEBMCP_CDP_HEADER": tc.env}, tc.file)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(c.headers, "|") != strings.Join(tc.want, "|") {
				t.Errorf("got %q, want %q", c.headers, tc.want)
			}
		})
	}
}

func TestConfigJSONAndEnvConfigPath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.json")
	if err := os.WriteFile(path, []byte(`{"max-tools": 12, "call-timeout": "2s"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := runConfig(t, nil, map[string]string{"WEBMCP_CDP_CONFIG": path}, "")
	if err != nil {
		t.Fatal(err)
	}
	if c.n != 12 || c.timeout != 2*time.Second {
		t.Errorf("got max-tools %d, call-timeout %s from the JSON file named by WEBMCP_CDP_CONFIG", c.n, c.timeout)
	}
}

func TestConfigErrorsNameTheirSource(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		file string
		want []string
	}{
		{"env duration", map[string]string{"WEBMCP_CDP_CALL_TIMEOUT": "3x"}, "", []string{`WEBMCP_CDP_CALL_TIMEOUT: invalid duration "3x" (try 30s)`}},
		{"env number", map[string]string{"WEBMCP_CDP_MAX_TOOLS": "many"}, "", []string{`WEBMCP_CDP_MAX_TOOLS: invalid number "many" (try 200)`}},
		{"env bool", map[string]string{"WEBMCP_CDP_HEADLESS": "maybe"}, "", []string{`WEBMCP_CDP_HEADLESS: invalid boolean "maybe"`}},
		{"env custom", map[string]string{"WEBMCP_CDP_VIEWPORT": "big"}, "", []string{`WEBMCP_CDP_VIEWPORT: invalid size "big" (try 1280x720`}},
		{"file duration", nil, "call-timeout: 3x\n", []string{`webmcp.yaml: call-timeout: invalid duration "3x" (try 30s)`}},
		{"unknown key", nil, "call-timeout: 3s\nbogus: 1\n", []string{`webmcp.yaml: unknown key "bogus"`}},
		{"config in the file", nil, "config: other.yaml\n", []string{`unknown key "config"`}},
		{"a list for a single flag", nil, "user-agent: [a, b]\n", []string{`user-agent: takes one value, not a list`}},
		{"a mapping value", nil, "user-agent: {a: b}\n", []string{`user-agent: must be a string, number or boolean`}},
		{"not a mapping", nil, "- a\n- b\n", []string{`must be a mapping of flag names`}},
		{"bad YAML", nil, "a: [\n", []string{`webmcp.yaml: not valid YAML or JSON`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := runConfig(t, nil, tc.env, tc.file)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func TestConfigMissingFile(t *testing.T) {
	var c configCmd
	cmd := newConfigCmd(&c)
	if err := cmd.ParseFlags([]string{"--config", filepath.Join(t.TempDir(), "none.yaml")}); err != nil {
		t.Fatal(err)
	}
	if err := cli.ApplyConfig(cmd, func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), "--config") {
		t.Errorf("a missing file gave %v, want an error naming --config", err)
	}
}

func TestEnvName(t *testing.T) {
	for flag, want := range map[string]string{"call-timeout": "WEBMCP_CDP_CALL_TIMEOUT", "http": "WEBMCP_CDP_HTTP", "max-tools-per-document": "WEBMCP_CDP_MAX_TOOLS_PER_DOCUMENT"} {
		if got := cli.EnvName(flag); got != want {
			t.Errorf("cli.EnvName(%q) = %q, want %q", flag, got, want)
		}
	}
}

// withConfigFile writes file (YAML) to a temp config file and adds
// --config with its path to args; an empty file adds nothing.
func withConfigFile(t *testing.T, args []string, file string) []string {
	t.Helper()
	if file == "" {
		return args
	}
	path := filepath.Join(t.TempDir(), "webmcp.yaml")
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	return append(args, "--config", path)
}
