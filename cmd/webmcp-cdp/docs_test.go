package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

var update = flag.Bool("update", false, "rewrite docs/flags.md from the cobra definitions")

// flagsDoc is the generated flag reference, relative to this package.
const flagsDoc = "../../docs/flags.md"

// TestFlagReference: docs/flags.md is what the cobra definitions say. With
// -update it is rewritten; without, a stale file fails the test and says
// how to rewrite it.
func TestFlagReference(t *testing.T) {
	got := flagReference(t)
	if *update {
		if err := os.WriteFile(flagsDoc, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(flagsDoc)
	if err != nil {
		t.Fatalf("reading docs/flags.md: %v; write it with: go test ./cmd/webmcp-cdp -run TestFlagReference -update", err)
	}
	if string(want) != got {
		t.Fatalf("docs/flags.md is stale: the flags changed. Rewrite it with:\n\tgo test ./cmd/webmcp-cdp -run TestFlagReference -update\nand commit it.")
	}
}

// flagReference renders the reference of every command and flag. Defaults
// that depend on the machine (the home directory, the environment) are
// rendered for a neutral one.
func flagReference(t *testing.T) string {
	t.Helper()
	const home = "/home/you"
	t.Setenv("HOME", home)
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "WEBMCP_CDP_") || strings.HasPrefix(k, "XDG_") || k == "CHROME_PATH" {
			t.Setenv(k, "") // restored after the test
			os.Unsetenv(k)
		}
	}
	root := newRoot()
	root.InitDefaultVersionFlag()

	var b strings.Builder
	b.WriteString("# Flag reference\n\n")
	b.WriteString("<!-- Generated from the cobra definitions by\n     go test ./cmd/webmcp-cdp -run TestFlagReference -update\n     Do not edit by hand: the test fails when this file is stale. -->\n\n")
	if root.Long != "" {
		b.WriteString(mdText(root.Long) + "\n\n")
	}
	b.WriteString("## Commands\n\n| command | what it does |\n|---|---|\n")
	type row struct {
		flag, def, usage string
		cmds             []string
	}
	rows := map[string]*row{}
	addFlags := func(where string, fs *pflag.FlagSet) {
		fs.VisitAll(func(f *pflag.Flag) {
			if f.Hidden || f.Name == "help" {
				return
			}
			varname, usage := pflag.UnquoteUsage(f)
			name := "--" + f.Name
			if f.Shorthand != "" {
				name = "-" + f.Shorthand + ", " + name
			}
			if varname != "" {
				name += " " + varname
			}
			def := f.DefValue
			switch def {
			case "false", "[]", "0s", "":
				if f.Value.Type() != "int" {
					def = ""
				}
			}
			def = strings.ReplaceAll(def, home, "~")
			key := name + "\x00" + def + "\x00" + usage
			r := rows[key]
			if r == nil {
				r = &row{flag: name, def: def, usage: usage}
				rows[key] = r
			}
			r.cmds = append(r.cmds, where)
		})
	}
	addFlags("all", root.PersistentFlags())
	addFlags("webmcp-cdp", root.LocalNonPersistentFlags())
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Hidden || sub.Name() == "help" || sub.Name() == "completion" {
				continue
			}
			path := strings.TrimPrefix(sub.CommandPath(), root.Name()+" ")
			fmt.Fprintf(&b, "| `%s` | %s |\n", mdCell(strings.TrimPrefix(sub.UseLine(), root.Name()+" ")), mdCell(sub.Short))
			addFlags(path, sub.NonInheritedFlags())
			walk(sub)
		}
	}
	walk(root)

	b.WriteString("\n## Flags\n\n`all` marks the flags every command takes, `webmcp-cdp` those of the program itself. A flag that means something else on another command has a row of its own.\n\n| flag | default | commands | meaning |\n|---|---|---|---|\n")
	list := make([]*row, 0, len(rows))
	for _, r := range rows {
		list = append(list, r)
	}
	sort.Slice(list, func(i, j int) bool {
		if a, b := strings.TrimLeft(list[i].flag, "-"), strings.TrimLeft(list[j].flag, "-"); a != b {
			return a < b
		}
		return strings.Join(list[i].cmds, ",") < strings.Join(list[j].cmds, ",")
	})
	for _, r := range list {
		def := ""
		if r.def != "" {
			def = "`" + mdCell(r.def) + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", r.flag, def, strings.Join(r.cmds, ", "), mdCell(r.usage))
	}
	return b.String()
}

// mdCell makes text safe in a Markdown table cell.
func mdCell(s string) string {
	s = strings.ReplaceAll(mdText(s), "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}

// mdText keeps angle brackets from reading as HTML.
func mdText(s string) string {
	return strings.NewReplacer("<", "&lt;", ">", "&gt;").Replace(s)
}

// clientDir holds one file per client snippet that the README shows.
const clientDir = "../../docs/clients"

// TestClientSnippets: every client snippet, in the README and as a file in
// docs/clients, parses (JSON with encoding/json, TOML with BurntSushi/toml)
// and starts webmcp-cdp with a command line that webmcp-cdp accepts; the
// README shows each file's snippet as it is, and no other.
func TestClientSnippets(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	fence := regexp.MustCompile("(?ms)^```(\\w*)\\n(.*?)^```")
	var inReadme []string
	for _, m := range fence.FindAllStringSubmatch(string(readme), -1) {
		if isClientSnippet(m[1], m[2]) {
			inReadme = append(inReadme, strings.TrimSpace(m[2]))
		}
	}
	files, err := filepath.Glob(filepath.Join(clientDir, "*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no client snippets in docs/clients (%v)", err)
	}
	var inFiles []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		snippet := strings.TrimSpace(string(b))
		inFiles = append(inFiles, snippet)
		t.Run(filepath.Base(f), func(t *testing.T) {
			lang := strings.TrimPrefix(filepath.Ext(f), ".")
			if !isClientSnippet(lang, snippet) {
				t.Fatalf("%s is not a client snippet this test knows (.json with mcpServers or servers, .toml with mcp_servers, .sh with claude mcp add)", f)
			}
			checkSnippet(t, lang, snippet)
			if !slices.Contains(inReadme, snippet) {
				t.Errorf("the README does not show %s as it is", f)
			}
		})
	}
	for _, s := range inReadme {
		if !slices.Contains(inFiles, s) {
			t.Errorf("the README shows a client snippet that docs/clients lacks:\n%s", s)
		}
	}
	// Both ways of installing it are shown: npx first, go install beside it.
	for _, want := range []string{"-- npx -y webmcp-cdp ", "-- webmcp-cdp "} {
		if !slices.ContainsFunc(inReadme, func(s string) bool { return strings.Contains(s, want) }) {
			t.Errorf("no client snippet in the README runs %q", want)
		}
	}
	for _, want := range []string{"claude mcp add", `"mcpServers"`, `"servers"`, "[mcp_servers."} {
		if !slices.ContainsFunc(inFiles, func(s string) bool { return strings.Contains(s, want) }) {
			t.Errorf("no client snippet has %s", want)
		}
	}
}

// isClientSnippet says whether a code block configures an MCP client.
func isClientSnippet(lang, body string) bool {
	switch lang {
	case "json":
		return strings.Contains(body, `"mcpServers"`) || strings.Contains(body, `"servers"`)
	case "toml":
		return strings.Contains(body, "[mcp_servers.")
	case "sh":
		return strings.HasPrefix(body, "claude mcp add")
	}
	return false
}

// checkSnippet parses one snippet and checks the command line it gives.
func checkSnippet(t *testing.T, lang, body string) {
	t.Helper()
	type server struct {
		Type    string   `json:"type" toml:"type"`
		Command string   `json:"command" toml:"command"`
		Args    []string `json:"args" toml:"args"`
	}
	var servers map[string]server
	switch lang {
	case "json":
		var conf struct {
			MCPServers map[string]server `json:"mcpServers"`
			Servers    map[string]server `json:"servers"` // VS Code
		}
		dec := json.NewDecoder(strings.NewReader(body))
		if err := dec.Decode(&conf); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, body)
		}
		servers = conf.MCPServers
		if conf.Servers != nil {
			servers = conf.Servers
			for name, s := range servers {
				if s.Type != "stdio" {
					t.Errorf("VS Code server %s: type %q, want stdio", name, s.Type)
				}
			}
		}
	case "toml":
		var conf struct {
			MCPServers map[string]server `toml:"mcp_servers"`
		}
		md, err := toml.Decode(body, &conf)
		if err != nil {
			t.Fatalf("not TOML: %v\n%s", err, body)
		}
		if un := md.Undecoded(); len(un) > 0 {
			t.Errorf("TOML keys this test does not know: %v", un)
		}
		servers = conf.MCPServers
	case "sh":
		words := strings.Fields(body)
		dash := slices.Index(words, "--")
		if len(words) < 5 || words[0] != "claude" || words[1] != "mcp" || words[2] != "add" || dash < 0 || dash+1 >= len(words) {
			t.Fatalf("want `claude mcp add NAME -- webmcp-cdp ARGS...`, got %q", body)
		}
		servers = map[string]server{words[3]: {Command: words[dash+1], Args: words[dash+2:]}}
	}
	if len(servers) == 0 {
		t.Fatalf("no server in the snippet:\n%s", body)
	}
	for name, s := range servers {
		args, err := webmcpArgs(s.Command, s.Args)
		if err != nil {
			t.Errorf("server %s: %v", name, err)
			continue
		}
		if err := checkCommandLine(args); err != nil {
			t.Errorf("server %s: webmcp-cdp %s: %v", name, strings.Join(args, " "), err)
		}
	}
}

// webmcpArgs is webmcp-cdp's part of a snippet's command line: the
// arguments after `npx -y webmcp-cdp` (the npm package that
// packaging/npm builds, whose bin is webmcp-cdp), or after the webmcp-cdp
// that `go install` puts on PATH.
func webmcpArgs(command string, args []string) ([]string, error) {
	switch filepath.Base(command) {
	case "webmcp-cdp":
		return args, nil
	case "npx":
		var pkg struct {
			Name string            `json:"name"`
			Bin  map[string]string `json:"bin"`
		}
		b, err := os.ReadFile("../../packaging/npm/webmcp-cdp/package.json")
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(b, &pkg); err != nil {
			return nil, fmt.Errorf("packaging/npm/webmcp-cdp/package.json: %w", err)
		}
		if len(args) < 2 || args[0] != "-y" || args[1] != pkg.Name || pkg.Bin[pkg.Name] == "" {
			return nil, fmt.Errorf("npx %s: want `npx -y %s ARGS...` (the npm package of packaging/npm, whose bin has its name)", strings.Join(args, " "), pkg.Name)
		}
		return args[2:], nil
	}
	return nil, fmt.Errorf("starts %q, not webmcp-cdp nor npx -y webmcp-cdp", command)
}

// checkCommandLine parses args as webmcp-cdp would, without running them:
// the command must serve MCP on stdio and take the flags and arguments.
func checkCommandLine(args []string) error {
	root := newRoot()
	cmd, rest, err := root.Find(args)
	if err != nil {
		return err
	}
	if !slices.Contains([]string{"launch", "attach", "demo", "connect"}, cmd.Name()) {
		return fmt.Errorf("%q does not serve MCP on stdio", cmd.Name())
	}
	if err := cmd.ParseFlags(rest); err != nil {
		return err
	}
	if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil {
		return err
	}
	return cmd.ValidateFlagGroups()
}

// TestReadmeTestCommand: the README's test command is the last go test CI
// runs (after it CI only waits for the fuzzing it started in the
// background), so that what the README promises is what CI checks.
func TestReadmeTestCommand(t *testing.T) {
	ci, err := os.ReadFile("../../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	var last string
	for _, l := range strings.Split(string(ci), "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "go test ") {
			last = l
		}
	}
	if last == "" {
		t.Fatal(".ci/run runs no go test")
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "```sh\n"+last+"\n```") {
		t.Errorf("the README does not show CI's last command %q as its test command", last)
	}
}
