package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestManPages: `man DIR` writes a page per command, dated by
// SOURCE_DATE_EPOCH, each listing that command's own flags.
func TestManPages(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1796083200") // 2026-12-01
	dir := filepath.Join(t.TempDir(), "man1")
	root := newRoot()
	root.SetArgs([]string{"man", dir})
	root.SetOut(io.Discard)
	if err := root.ExecuteContext(t.Context()); err != nil {
		t.Fatal(err)
	}
	read := func(name string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, tc := range []struct {
		page      string
		want, not []string
	}{
		{"webmcp-cdp.1", []string{`.TH "WEBMCP-CDP" "1" "Dec 2026"`, "webmcp-cdp-launch(1)", "webmcp-cdp-inspect(1)"}, nil},
		{"webmcp-cdp-inspect.1", []string{"webmcp-cdp inspect [flags] URL", `\fB--backend\fP="auto"`, `\fB--wait-for-tool\fP`, "Exit status"}, []string{`\fB--confirm\fP`, `\fB--list\fP`, `\fB--http\fP`}},
		{"webmcp-cdp-launch.1", []string{`\fB--confirm\fP="none"`, `\fB--list\fP`, `\fB--http\fP`}, nil},
		{"webmcp-cdp-relay-token.1", []string{`\fB--jwt-secret-file\fP`}, nil},
	} {
		page := read(tc.page)
		for _, w := range tc.want {
			if !strings.Contains(page, w) {
				t.Errorf("%s lacks %q", tc.page, w)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(page, n) {
				t.Errorf("%s has %q", tc.page, n)
			}
		}
	}
	if strings.Contains(read("webmcp-cdp-launch.1"), "Auto generated") {
		t.Error("the pages carry cobra's generated-on footer (a date that changes every build)")
	}
}
