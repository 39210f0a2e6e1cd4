package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// goInstall is the install step of the examples: on this machine it is
// replaced by the binary under test, put first on PATH.
const goInstall = "go install github.com/webmcp-cdp/webmcp-cdp/cmd/webmcp-cdp@latest"

// TestCIExamples runs the shell steps of docs/ci/github-actions.yml and
// docs/ci/gitlab-ci.yml as written, in a fresh directory, with the
// variables the files ask a user to set pointed at the fixture site
// (fixtures/ci, its spec webmcp-tests.yaml) and a free port. What is
// substituted, and why:
//   - `go install …@latest` becomes a no-op, with the binary under test first
//     on PATH (the test must check this build, and the module proxy has no
//     copy of it);
//   - the `uses:` steps of GitHub Actions (checkout, setup-go, the artifact
//     upload) are actions, not shell, and are left out: the spec and the site
//     come from this checkout, Go is this one.
//
// Chromium, python3 and curl are found on this machine, so the install
// steps run as written and install nothing.
func TestCIExamples(t *testing.T) {
	t.Parallel()
	site, err := filepath.Abs("../fixtures/ci")
	if err != nil {
		t.Fatal(err)
	}
	t.Run("GitHub Actions", func(t *testing.T) {
		var wf struct {
			Jobs map[string]struct {
				Env   map[string]string `yaml:"env"`
				Steps []struct {
					Name string `yaml:"name"`
					Uses string `yaml:"uses"`
					Run  string `yaml:"run"`
				} `yaml:"steps"`
			} `yaml:"jobs"`
		}
		readYAML(t, "../docs/ci/github-actions.yml", &wf)
		job, ok := wf.Jobs["webmcp"]
		if !ok || len(job.Steps) < 4 {
			t.Fatalf("the workflow has no webmcp job with steps: %+v", wf)
		}
		var steps []string
		for _, s := range job.Steps {
			if s.Run != "" {
				steps = append(steps, s.Run)
			}
		}
		dir := t.TempDir()
		summary := filepath.Join(dir, "summary.md")
		env := exampleEnv(t, job.Env, site, "GITHUB_ACTIONS=true", "GITHUB_STEP_SUMMARY="+summary)
		// Each run: step is its own shell, as GitHub runs it.
		var script strings.Builder
		for i, s := range steps {
			f := filepath.Join(dir, fmt.Sprintf("step%d.sh", i))
			os.WriteFile(f, []byte(substitute(t, s)), 0o755)
			fmt.Fprintf(&script, "bash --noprofile --norc -eo pipefail %s || exit $?\n", f)
		}
		runExample(t, dir, env, script.String())
		checkResults(t, dir)
		if b, _ := os.ReadFile(summary); !strings.Contains(string(b), "### ✅ WebMCP tools") {
			t.Errorf("the step summary:\n%s", b)
		}
	})
	t.Run("GitLab CI", func(t *testing.T) {
		var ci map[string]struct {
			Variables    map[string]string `yaml:"variables"`
			BeforeScript []string          `yaml:"before_script"`
			Script       []string          `yaml:"script"`
		}
		readYAML(t, "../docs/ci/gitlab-ci.yml", &ci)
		job, ok := ci["webmcp-tools"]
		if !ok || len(job.Script) == 0 {
			t.Fatalf("no webmcp-tools job with a script: %+v", ci)
		}
		dir := t.TempDir()
		env := exampleEnv(t, job.Variables, site)
		// GitLab runs before_script and script in one shell and stops at the
		// first line that fails.
		lines := append(append([]string{"set -eo pipefail"}, job.BeforeScript...), job.Script...)
		runExample(t, dir, env, substitute(t, strings.Join(lines, "\n")))
		checkResults(t, dir)
	})
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// substitute replaces the install of webmcp-cdp, which must be in script.
func substitute(t *testing.T, script string) string {
	t.Helper()
	if strings.Contains(script, "go install") && !strings.Contains(script, goInstall) {
		t.Fatalf("an install step other than %q: %s", goInstall, script)
	}
	return strings.ReplaceAll(script, goInstall, ": webmcp-cdp is the binary under test, first on PATH")
}

// exampleEnv is the job's environment: the variables the file sets, with
// the site, the spec and the port a user would set pointed at this
// machine's fixture site.
func exampleEnv(t *testing.T, vars map[string]string, site string, extra ...string) []string {
	t.Helper()
	for _, k := range []string{"SITE_DIR", "SPEC", "PORT"} {
		if _, ok := vars[k]; !ok {
			t.Fatalf("the example does not set %s: %v", k, vars)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	env := []string{"PATH=" + filepath.Dir(binary) + string(os.PathListSeparator) + os.Getenv("PATH")}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PATH=") && !strings.HasPrefix(kv, "GITHUB_") {
			env = append(env, kv)
		}
	}
	env = append(env, "SITE_DIR="+site, "SPEC="+filepath.Join(site, "webmcp-tests.yaml"), "PORT="+port)
	return append(env, extra...)
}

// runExample runs script with bash in dir, in a process group of its own
// that is ended afterwards (the steps leave the site's server running, as
// a CI job does until it ends).
func runExample(t *testing.T, dir string, env []string, script string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "--noprofile", "--norc", "-c", script)
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	out, err := cmd.CombinedOutput()
	syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	if err != nil {
		t.Fatalf("the example's steps failed: %v\n%s", err, out)
	}
	t.Logf("the steps printed:\n%s", out)
}

// checkResults checks the JUnit file the example's test step wrote.
func checkResults(t *testing.T, dir string) {
	t.Helper()
	doc := readJUnit(t, filepath.Join(dir, "webmcp-results.xml"))
	if doc.Tests < 10 || doc.Failures != 0 || doc.Errors != 0 || len(doc.Suites) != 2 {
		t.Errorf("JUnit: %d tests, %d failures, %d errors, %d suites", doc.Tests, doc.Failures, doc.Errors, len(doc.Suites))
	}
}
