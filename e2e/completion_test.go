package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// bashCompletion is Debian's bash-completion, which the script of
// `completion bash` builds on (its _get_comp_words_by_ref), as in a
// person's interactive bash. .ci/run installs it.
const bashCompletion = "/usr/share/bash-completion/bash_completion"

// completeInBash runs the real bash completion of `webmcp-cdp words...`
// (the last word is the one being completed) and returns the candidates.
func completeInBash(t *testing.T, script string, words ...string) []string {
	t.Helper()
	// What bash does on <Tab>: COMP_* set, the function that `complete -F`
	// names called; it asks the binary (`__complete`) and fills COMPREPLY.
	const run = `source "$1"; source "$2"; shift 2
COMP_WORDS=("$@")
COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
COMP_LINE="${COMP_WORDS[*]}"
COMP_POINT=${#COMP_LINE}
__start_webmcp-cdp 2>/dev/null
printf '%s\n' "${COMPREPLY[@]}"`
	args := append([]string{"-c", run, "bash", bashCompletion, script, binary}, words...)
	out, err := exec.Command("bash", args...).Output()
	if err != nil {
		t.Fatalf("bash completion of %q: %v", words, err)
	}
	return strings.Fields(string(out))
}

// TestShellCompletion: `completion bash`, sourced in a real bash, completes
// the values of flags whose set is known, from the list their check uses,
// and a command's own flags only; the other shells' scripts are made.
func TestShellCompletion(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatalf("bash is needed: %v", err)
	}
	if _, err := os.Stat(bashCompletion); err != nil {
		t.Fatalf("Debian's bash-completion is needed (apt-get install bash-completion; .ci/run installs it): %v", err)
	}
	out, err := exec.Command(binary, "completion", "bash").Output()
	if err != nil {
		t.Fatalf("completion bash: %v", err)
	}
	script := filepath.Join(t.TempDir(), "webmcp-cdp.bash")
	if err := os.WriteFile(script, out, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		words []string
		want  []string
	}{
		{[]string{"inspect", "--backend", ""}, []string{"auto", "polyfill", "native"}},
		{[]string{"launch", "--list", "act"}, []string{"active", "active+cached"}},
		{[]string{"attach", "--confirm", ""}, []string{"none", "consequential", "writes"}},
		{[]string{"launch", "--channel", "c"}, []string{"canary"}},
		{[]string{"call", "--dialogs", ""}, []string{"fail", "accept", "dismiss"}},
		{[]string{"version", "--log-level", "w"}, []string{"warn"}},
		// A command completes its own flags only: --confirm is launch's.
		{[]string{"inspect", "--con"}, []string{"--config"}},
		{[]string{"launch", "--con"}, []string{"--config", "--confirm"}},
	} {
		t.Run(strings.Join(tc.words, " "), func(t *testing.T) {
			got := completeInBash(t, script, tc.words...)
			if !slices.Equal(got, tc.want) {
				t.Errorf("bash completes %q to %q, want %q", tc.words, got, tc.want)
			}
		})
	}
	for _, shell := range []string{"zsh", "fish", "powershell"} {
		out, err := exec.Command(binary, "completion", shell).Output()
		if err != nil || !strings.Contains(string(out), "webmcp-cdp") {
			t.Errorf("completion %s: %v, %d bytes", shell, err, len(out))
		}
	}
}
