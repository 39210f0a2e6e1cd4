package serve

import (
	"context"
	"testing"

	"github.com/webmcp-cdp/webmcp-cdp/cdp"
	"github.com/webmcp-cdp/webmcp-cdp/cdp/browsers"
	"github.com/webmcp-cdp/webmcp-cdp/cdp/cdptest"
	"github.com/webmcp-cdp/webmcp-cdp/hub/mcpserver"
	"github.com/webmcp-cdp/webmcp-cdp/internal/userscript"
)

// TestSpacesUserscripts: in spaces mode every space follows the one set of
// userscripts, each records the documents of its own browser, and the
// status page of a person's space shows the scripts in force with that
// space's documents alone.
func TestSpacesUserscripts(t *testing.T) {
	script, err := userscript.Parse("team.user.js", []byte("// ==UserScript==\n// @name Team\n// @match https://team.example/*\n// ==/UserScript==\n"))
	if err != nil {
		t.Fatal(err)
	}
	set := userscript.NewSet([]*userscript.Script{script})
	src := cdptest.NewSource(cdptest.SourceOptions{})
	ss := NewSpaces(t.Context(), &Options{CDP: cdp.Options{Userscripts: set}}, SpacesOptions{Source: func() browsers.Source { return src }})
	t.Cleanup(ss.Close)
	open := func(who string) *mcpserver.Server {
		ctx, cancel := context.WithTimeout(t.Context(), cdptest.Patience)
		defer cancel()
		srv, err := ss.Space(ctx, mcpserver.Person{Issuer: "https://id.example", Subject: who})
		if err != nil {
			t.Fatal(err)
		}
		return srv
	}
	alice, bob := open("alice"), open("bob")
	var aliceRuns, bobRuns *userscript.Runs
	for _, s := range ss.open() {
		switch s.Server {
		case alice:
			aliceRuns = s.runs
		case bob:
			bobRuns = s.runs
		}
	}
	if aliceRuns == nil || bobRuns == nil || aliceRuns == bobRuns {
		t.Fatalf("the spaces record their documents in %p and %p, want one record each", aliceRuns, bobRuns)
	}
	aliceRuns.Ran("Team", "https://team.example/alice")
	for _, tc := range []struct {
		name string
		srv  *mcpserver.Server
		want []string
	}{
		{"Alice sees her document", alice, []string{"https://team.example/alice"}},
		{"Bob sees none of hers", bob, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ss.userscripts(tc.srv)
			if len(got) != 1 || got[0].Name != "Team" || got[0].File != "team.user.js" {
				t.Fatalf("the status page lists %+v, want the script in force", got)
			}
			if len(got[0].Documents) != len(tc.want) || (len(tc.want) > 0 && got[0].Documents[0] != tc.want[0]) {
				t.Errorf("documents %v, want %v", got[0].Documents, tc.want)
			}
		})
	}
}
