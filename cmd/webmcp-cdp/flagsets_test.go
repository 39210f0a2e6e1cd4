package main

import (
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/webmcp-cdp/webmcp-cdp/cmd/webmcp-cdp/cli"
)

// servingCommands are the commands that serve a browser to MCP clients.
var servingCommands = []string{"launch", "attach", "demo"}

// flagID tells a flag apart from another of the same name on another
// command that means something else (connect's --token is not --http's).
func flagID(f *pflag.Flag) string { return f.Name + "\x00" + f.Usage }

// flagSet registers with register on a new set and returns its flags by
// flagID.
func flagSet(register func(*pflag.FlagSet)) map[string]*pflag.Flag {
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	register(fs)
	out := map[string]*pflag.Flag{}
	fs.VisitAll(func(f *pflag.Flag) { out[flagID(f)] = f })
	return out
}

// servingFlags are the flags of a served browser that are neither page
// nor call flags, from the definitions themselves: a serving flag added
// anywhere in browserFlags is one.
func servingFlags() map[string]*pflag.Flag {
	bf := browserFlags{relay: &relayFlags{}}
	all := flagSet(bf.register)
	for id := range flagSet(new(pageFlags).register) {
		delete(all, id)
	}
	for id := range flagSet(new(callFlags).register) {
		delete(all, id)
	}
	return all
}

// walkCommands calls visit with every command under root (root excluded).
func walkCommands(root *cobra.Command, visit func(*cobra.Command)) {
	cli.EachCommand(root, func(c *cobra.Command) {
		if c != root {
			visit(c)
		}
	})
}

// TestServingFlagsOnlyOnServingCommands walks every command: the serving
// flags (listing, confirmation, HTTP, relay, caching) are on launch, attach
// and demo, and on no other command, shown or hidden.
func TestServingFlagsOnlyOnServingCommands(t *testing.T) {
	serving := servingFlags()
	if len(serving) < 10 {
		t.Fatalf("only %d serving flags found; the flag sets changed shape", len(serving))
	}
	for _, name := range []string{"confirm", "list", "max-listed-tools", "no-tab-tools", "wait-tools", "max-inflight-per-tab", "state-dir", "cache-ttl", "http", "token"} {
		found := false
		for _, f := range serving {
			found = found || f.Name == name
		}
		if !found {
			t.Errorf("--%s is not among the serving flags", name)
		}
	}
	seen := 0
	walkCommands(newRoot(), func(c *cobra.Command) {
		seen++
		path := cli.CommandPath(c)
		var has []string
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if _, ok := serving[flagID(f)]; ok {
				has = append(has, "--"+f.Name)
			}
		})
		if slices.Contains(servingCommands, path) {
			if len(has) < len(serving)-len(flagSet(new(relayFlags).register)) {
				t.Errorf("%s has %d of the %d serving flags: %s", path, len(has), len(serving), strings.Join(has, " "))
			}
			return
		}
		if len(has) > 0 {
			t.Errorf("%s takes serving flags it does not use: %s", path, strings.Join(has, " "))
		}
	})
	if seen < 12 {
		t.Errorf("walked %d commands, want every one (at least 12)", seen)
	}
}

// TestCIModeFlags: inspect reads pages and calls nothing; call and test
// also take the call flags.
func TestCIModeFlags(t *testing.T) {
	root := newRoot()
	for _, tc := range []struct {
		cmd   string
		has   []string
		hasnt []string
	}{
		{"inspect", []string{"backend", "settle", "timeout", "tool-names", "allow-origin", "chrome", "viewport", "wait-for-tool"}, []string{"call-timeout", "max-result-bytes", "dialogs", "confirm", "list", "state-dir", "http"}},
		{"call", []string{"backend", "settle", "timeout", "call-timeout", "max-result-bytes", "dialogs"}, []string{"confirm", "list", "wait-tools", "state-dir", "cache-ttl", "http", "relay"}},
		{"test", []string{"backend", "settle", "call-timeout", "dialogs", "junit"}, []string{"confirm", "no-tab-tools", "max-inflight-per-tab", "token"}},
	} {
		c, _, err := root.Find([]string{tc.cmd})
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range tc.has {
			if c.Flags().Lookup(name) == nil {
				t.Errorf("%s has no --%s", tc.cmd, name)
			}
		}
		for _, name := range tc.hasnt {
			if c.Flags().Lookup(name) != nil {
				t.Errorf("%s has --%s, which it does not use", tc.cmd, name)
			}
		}
	}
}

// TestCIModeServingDefaults: the serving flags CI mode does not take keep
// their defaults, so its flags check, and it keeps cached tools in memory.
func TestCIModeServingDefaults(t *testing.T) {
	var f ciFlags
	f.register(&cobra.Command{Use: "inspect"}, false)
	if _, err := f.sf.check(t.Context()); err != nil {
		t.Fatalf("CI mode's flags at their defaults do not check: %v", err)
	}
	if f.sf.stateDir != "" {
		t.Errorf("CI mode's state dir is %q, want none (memory only)", f.sf.stateDir)
	}
	if f.sf.confirm != "none" || f.sf.callTimeout <= 0 || f.sf.maxInflight < 1 {
		t.Errorf("serving defaults not set: confirm %q, call timeout %s, max in flight %d", f.sf.confirm, f.sf.callTimeout, f.sf.maxInflight)
	}
}

// TestSharedConfigAcrossCommands: one config file (or environment) serves
// every command. A key of a flag that inspect does not take (a serving
// flag, even with a value that serving would refuse) is left alone, and
// inspect's own keys still apply; a key no command knows is still an error.
func TestSharedConfigAcrossCommands(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		env        map[string]string
		wantErr    string
	}{
		{name: "serving keys", file: "confirm: writes\nlist: active\nstate-dir: /nonexistent\nhttp: 127.0.0.1:1\nsettle: 2s\n"},
		{name: "a serving key with a value serving refuses", file: "confirm: bogus\nmax-inflight-per-tab: 0\nsettle: 2s\n"},
		{name: "serving flags in the environment", file: "settle: 2s\n", env: map[string]string{"WEBMCP_CDP_CONFIRM": "bogus", "WEBMCP_CDP_CALL_TIMEOUT": "x", "WEBMCP_CDP_LIST": "active"}},
		{name: "a key no command has", file: "settle: 2s\nconfrim: writes\n", wantErr: `unknown key "confrim"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := newRoot()
			cmd, _, err := root.Find([]string{"inspect"})
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.ParseFlags(withConfigFile(t, nil, tc.file)); err != nil {
				t.Fatal(err)
			}
			err = cli.ApplyConfig(cmd, func(k string) string { return tc.env[k] })
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want an error with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("inspect with a shared config: %v", err)
			}
			if got := cmd.Flags().Lookup("settle").Value.String(); got != "2s" {
				t.Errorf("inspect's --settle from the file: %s, want 2s", got)
			}
		})
	}
}

// TestFlagOfAnotherCommand: a flag that only other commands take is a
// usage error (exit status 2) that names them; a flag no command has keeps
// pflag's words, and so does a bad value of a flag the command has.
func TestFlagOfAnotherCommand(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"inspect", "--confirm", "never", "http://127.0.0.1:1/"}, "--confirm is a flag of attach, demo and launch; inspect does not use it (see webmcp-cdp inspect --help)"},
		{[]string{"call", "--list=active", "http://127.0.0.1:1/", "t"}, "--list is a flag of attach, demo and launch; call does not use it"},
		{[]string{"inspect", "--call-timeout", "5s", "http://127.0.0.1:1/"}, "--call-timeout is a flag of attach, call, demo, launch and test; inspect does not use it"},
		{[]string{"version", "--chrome", "x"}, "--chrome is a flag of call, demo, inspect, launch and test; version does not use it"},
		{[]string{"relay", "token", "--listen", ":1"}, "--listen is a flag of relay; relay token does not use it"},
		{[]string{"polyfill", "--junit", "x"}, "--junit is a flag of test; polyfill does not use it"},
		{[]string{"connect", "--http", ":1"}, "--http is a flag of attach, demo and launch; connect does not use it"},
		// Hidden flags are not offered: bench's forwarder flags are internal.
		{[]string{"inspect", "--forward-page", "x", "http://127.0.0.1:1/"}, "unknown flag: --forward-page"},
		{[]string{"inspect", "--nope", "http://127.0.0.1:1/"}, "unknown flag: --nope"},
		{[]string{"launch", "--settle", "soon"}, `invalid argument "soon" for "--settle"`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			root := newRoot()
			root.SetArgs(tc.args)
			root.SetOut(io.Discard)
			root.SetErr(io.Discard)
			err := root.ExecuteContext(t.Context())
			if err == nil || cli.ExitCode(err) != 2 {
				t.Fatalf("got %v, want a usage error (exit status 2)", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %q, want %q in it", err, tc.want)
			}
		})
	}
}
