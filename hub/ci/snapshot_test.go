package ci

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSnapshot: snapshots compared structurally, with ignore and matches
// marks; the diff names the paths that differ.
func TestSnapshot(t *testing.T) {
	tests := []struct {
		name   string
		expect string // YAML of expect
		text   string // the result's text
		fail   string // "" when it passes, else a part of the failure
		diff   []string
	}{
		{"equal JSON, keys in another order", `snapshot: {a: 1, b: [x, y]}`, `{"b":["x","y"],"a":1}`, "", nil},
		{"a changed value", `snapshot: {a: 1, b: 2}`, `{"a":1,"b":3}`, "differs from the snapshot", []string{"- $.b: 2", "+ $.b: 3"}},
		{"a key gone and a key more", `snapshot: {a: 1, b: 2}`, `{"a":1,"c":3}`, "differs", []string{"- $.b: 2", "+ $.c: 3"}},
		{"an element more", `snapshot: {items: [a]}`, `{"items":["a","b"]}`, "differs", []string{`+ $.items[1]: "b"`}},
		{"structural, not a subset", `snapshot: {a: 1}`, `{"a":1,"extra":true}`, "differs", []string{"+ $.extra: true"}},
		{"ignored", "snapshot: {id: 1, created: 5}\nignore: [$.created]", `{"id":1,"created":99}`, "", nil},
		{"ignored key absent", "snapshot: {id: 1, created: 5}\nignore: [$.created]", `{"id":1}`, "", nil},
		{"ignore with wildcards", "snapshot: {items: [{id: 1, n: a}, {id: 2, n: b}]}\nignore: ['$.items[*].id']", `{"items":[{"id":7,"n":"a"},{"id":8,"n":"b"}]}`, "", nil},
		{"ignore [-1]", "snapshot: [1, 2, 3]\nignore: ['$[-1]']", `[1,2,9]`, "", nil},
		{"wildcard still compares the rest", "snapshot: {items: [{id: 1, n: a}]}\nignore: ['$.items[*].id']", `{"items":[{"id":7,"n":"z"}]}`, "differs", []string{`- $.items[0].n: "a"`, `+ $.items[0].n: "z"`}},
		{"matches a mark", "snapshot: {id: abc-1}\nmatches: {$.id: '^[a-z]+-\\d+$'}", `{"id":"xyz-42"}`, "", nil},
		{"matches a mark that fails", "snapshot: {id: abc-1}\nmatches: {$.id: '^[a-z]+-\\d+$'}", `{"id":"42"}`, "differs", []string{"- $.id: a value matching /^[a-z]+-\\d+$/", `+ $.id: "42"`}},
		{"matches a number", "snapshot: {at: 1}\nmatches: {$.at: '^\\d{3}$'}", `{"at":123}`, "", nil},
		{"matches without a snapshot", `matches: {$.n: '^\d+$'}`, `{"n":"x"}`, "matches: a value differs", []string{"- $.n: a value matching /^\\d+$/", `+ $.n: "x"`}},
		{"matches a path that is not there", `matches: {$.gone: 'x'}`, `{"n":1}`, "matches", []string{"- $.gone: a value matching /x/", "+ $.gone: nothing there"}},
		{"text equal", `snapshot: hello`, "hello", "", nil},
		{"text is not read as JSON", `snapshot: "42"`, "42", "", nil},
		{"text differs line by line", "snapshot: \"a\\nb\\nc\"", "a\nB\nc", "differs", []string{"$: the text differs:", "  a", "+ B", "- b", "  c"}},
		{"text where JSON was recorded", `snapshot: {a: 1}`, "not json", "not JSON", []string{`- $: {"a":1}`, `+ $: "not json"`}},
		{"the whole text ignored", "snapshot: anything\nignore: [$]", "something else", "", nil},
		{"odd keys", `snapshot: {"a b": 1}`, `{"a b":2}`, "differs", []string{`- $["a b"]: 1`, `+ $["a b"]: 2`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec, err := ParseSpec([]byte("pages:\n  - url: http://x/\n    calls:\n      - tool: t\n        expect:\n" + indent(tt.expect, "          ") + "\n"))
			if err != nil {
				t.Fatal(err)
			}
			res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: tt.text}}}
			fail, diff := checkResult(res, spec.Pages[0].Calls[0].Expect)
			if (tt.fail == "") != (fail == "") || !strings.Contains(fail, tt.fail) {
				t.Errorf("failure %q, want %q (diff %q)", fail, tt.fail, diff)
			}
			if strings.Join(diff, "\n") != strings.Join(tt.diff, "\n") {
				t.Errorf("diff:\n%s\nwant:\n%s", strings.Join(diff, "\n"), strings.Join(tt.diff, "\n"))
			}
		})
	}
}

// TestSnapshotSpecErrors: the marks are checked when the spec is read.
func TestSnapshotSpecErrors(t *testing.T) {
	for expect, want := range map[string]string{
		"ignore: [$.a]":              "ignore marks values of a snapshot",
		"snapshot: 1\nignore: [a.b]": "path \"a.b\": a path starts with $",
		"matches: {$.a: '('}":        "not a regular expression",
		"matches: {'$.a[': x}":       "is not closed",
		"snapshot: 1\nignore: $.a":   "want a list",
		"matches: {$.a: [x]}":        "want a string",
	} {
		_, err := ParseSpec([]byte("pages:\n  - url: http://x/\n    calls:\n      - tool: t\n        expect:\n" + indent(expect, "          ") + "\n"))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err %v, want %q", expect, err, want)
		}
	}
	if _, err := ParseSpec([]byte("secrets: [1BAD]\npages:\n  - url: http://x/\n    tools: [a]\n")); err == nil || !strings.Contains(err.Error(), "secrets[0]") {
		t.Errorf("a bad secret's name: %v", err)
	}
}

// TestSubstitute: secrets are filled in from the environment, in args and
// snapshots; the report shows the placeholders; one not set is an error
// that names it.
func TestSubstitute(t *testing.T) {
	src := "secrets: [PW, TOKEN]\npages:\n  - url: http://x/\n    calls:\n      - tool: login\n        args: {pw: '${PW}', t: 'Bearer ${TOKEN}', other: '${HOME}'}\n        expect:\n          snapshot: {echo: '${PW}'}\n"
	env := map[string]string{"PW": "hunter2", "TOKEN": "tok"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	s, err := ParseSpec([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Substitute(lookup); err != nil {
		t.Fatal(err)
	}
	c := s.Pages[0].Calls[0]
	if string(c.Args) != `{"other":"${HOME}","pw":"hunter2","t":"Bearer tok"}` || string(c.Expect.Snapshot) != `{"echo":"hunter2"}` {
		t.Errorf("args %s, snapshot %s", c.Args, c.Expect.Snapshot)
	}
	if !strings.Contains(string(c.shownArgs), "${PW}") {
		t.Errorf("shown args %s", c.shownArgs)
	}
	if got := s.scrubSecrets(`{"echo":"hunter2"}`); got != `{"echo":"${PW}"}` {
		t.Errorf("scrub: %s", got)
	}
	delete(env, "TOKEN")
	s, _ = ParseSpec([]byte(src))
	if err := s.Substitute(lookup); err == nil || !strings.Contains(err.Error(), "TOKEN") || strings.Contains(err.Error(), "PW,") {
		t.Errorf("a secret not set: %v", err)
	}
}

// TestUpdateSnapshots: --update replaces the snapshots only, keeping the
// marks, the other calls and the comments.
func TestUpdateSnapshots(t *testing.T) {
	src := `# recorded
secrets: [PW]
pages:
  - url: http://x/
    calls:
      - name: first
        tool: a
        expect:
          snapshot: {id: 1, n: 2} # old
          ignore: [$.id]
      - tool: b
        expect:
          matches: {$.at: '^\d+$'}
          snapshot: {at: 1, v: old}
`
	file := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		page, call int
		text       string
	}{
		{0, 0, `{"id":9,"n":3}`},
		{0, 1, `{"at":5,"v":"new ${PW}","big":12345678901}`},
	}
	var ups []SnapshotUpdate
	for _, tt := range tests {
		u := SnapshotUpdate{Page: tt.page, Call: tt.call}
		u.take(tt.text, []string{"x"})
		ups = append(ups, u)
	}
	if err := UpdateSnapshots(file, ups); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(file)
	s, err := ParseSpec(data)
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	c := s.Pages[0].Calls
	if string(c[0].Expect.Snapshot) != `{"id":9,"n":3}` || strings.Join(c[0].Expect.Ignore, ",") != "$.id" || c[0].Name != "first" {
		t.Errorf("first: %+v", c[0])
	}
	if string(c[1].Expect.Snapshot) != `{"at":5,"big":12345678901,"v":"new ${PW}"}` || c[1].Expect.Matches.Paths["$.at"] != `^\d+$` {
		t.Errorf("second: %s %v", c[1].Expect.Snapshot, c[1].Expect.Matches)
	}
	for _, kept := range []string{"# recorded", "secrets: [PW]"} {
		if !strings.Contains(string(data), kept) {
			t.Errorf("lost %q:\n%s", kept, data)
		}
	}
	// A call that is not in the file any more is an error, not a guess.
	if err := UpdateSnapshots(file, []SnapshotUpdate{{Page: 0, Call: 5, New: 1}}); err == nil || !strings.Contains(err.Error(), "calls[5]") {
		t.Errorf("missing call: %v", err)
	}
}

// TestRunnerSnapshots: a snapshot that differs fails its call with the
// tool, the arguments as written (placeholders, not secrets) and the diff;
// with Update it is taken as the new snapshot and the call passes.
func TestRunnerSnapshots(t *testing.T) {
	src := `secrets: [PW]
lint: off
pages:
  - url: http://site.test/notes
    calls:
      - name: step 1
        tool: stats
        args: {pw: '${PW}'}
        expect:
          snapshot: {notes: 3, tags: [a, b], owner: {name: ci, admin: false}}
      - name: step 2
        tool: add
        expect:
          snapshot: {sum: 4}
          matches: {$.sum: '^9$'}
`
	for _, update := range []bool{false, true} {
		t.Run(map[bool]string{false: "check", true: "update"}[update], func(t *testing.T) {
			_, s := newFakeSite(t, notesSite())
			spec, err := ParseSpec([]byte(src))
			if err != nil {
				t.Fatal(err)
			}
			if err := spec.Substitute(func(string) (string, bool) { return "hunter2", true }); err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			rep := (&Runner{Session: s, Out: &out, Update: update}).Run(context.Background(), "s.yaml", spec, []string{"http://site.test/notes"})
			n := rep.Counts()
			if update {
				if n.Failed != 1 || len(rep.Updates) != 2 || rep.Updates[0].Name != "step 1" || strings.Join(rep.Updates[0].Diff, "|") != "- $.notes: 3|+ $.notes: 2" {
					t.Errorf("counts %v, updates %+v\n%s", n, rep.Updates, out.String())
				}
				if c := rep.Suites[0].Cases[1]; c.Note != "snapshot updated" {
					t.Errorf("step 1: %+v", c)
				}
				// A matches mark that does not hold still fails the call.
				if c := rep.Suites[0].Cases[2]; c.Failure != "the result differs from the snapshot" || !strings.Contains(c.Detail, "- $.sum: a value matching /^9$/") {
					t.Errorf("step 2: %+v", c)
				}
				return
			}
			c := rep.Suites[0].Cases[1]
			if n.Failed != 2 || c.Name != "step 1" || c.Failure != "the result differs from the snapshot" || len(rep.Updates) != 0 {
				t.Fatalf("counts %v, case %+v\n%s", n, c, out.String())
			}
			want := "tool: stats\narguments: {\"pw\":\"${PW}\"}\ndiff (- expected, + actual):\n- $.notes: 3\n+ $.notes: 2"
			if c.Detail != want {
				t.Errorf("detail:\n%s\nwant:\n%s", c.Detail, want)
			}
			if strings.Contains(out.String(), "hunter2") {
				t.Errorf("the secret is in the report:\n%s", out.String())
			}
		})
	}
}

// TestUpdateSnapshotsJSON: a JSON spec stays JSON.
func TestUpdateSnapshotsJSON(t *testing.T) {
	file := filepath.Join(t.TempDir(), "s.json")
	src := `{"pages": [{"url": "http://x/", "calls": [{"tool": "a", "expect": {"snapshot": {"n": 1}, "ignore": ["$.id"]}}]}]}`
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	u := SnapshotUpdate{}
	u.take(`{"n":2,"id":"x"}`, []string{"x"})
	if err := UpdateSnapshots(file, []SnapshotUpdate{u}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(file)
	var v map[string]any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("not JSON any more: %v\n%s", err, data)
	}
	s, err := ParseSpec(data)
	if err != nil || string(s.Pages[0].Calls[0].Expect.Snapshot) != `{"id":"x","n":2}` || s.Pages[0].Calls[0].Expect.Ignore[0] != "$.id" {
		t.Errorf("%v\n%s", err, data)
	}
}
