package e2e

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// This file's name sorts it among the first: TestNpmPackages is one long
// chain of steps (a release build, npm pack and install, npx), and parallel
// tests start in the order of their files, so it runs beside the others
// rather than after them at the end.

// npmVersion is the version TestNpmPackages packs and expects back.
const npmVersion = "0.0.0-e2e.1"

// TestNpmPackages (issue 29 point 1): the release workflow's steps, up to
// and not including Publish, run here as on a tag: packaging/npm/pack.sh
// packs the launcher and this machine's platform package (PLATFORMS=host;
// the other five are the same script with other GOOS/GOARCH, which the
// release workflow packs), and npm installs the two tarballs into an empty prefix with an
// empty cache, --offline, --ignore-scripts and an unreachable registry.
// Then `npx webmcp-cdp --version` prints the stamped version (the binary is
// built with -buildvcs=false) and `npx webmcp-cdp demo --exit` lists and
// calls the demo's tools.
func TestNpmPackages(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"npm", "npx", "node", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not on PATH: install Node and npm (apt-get install nodejs npm); .ci/run does", tool)
		}
	}
	// A bound for a step that hangs, not a speed check: the steps build
	// the release binary and run npm while the other tests run (seen:
	// 185 s in all on a loaded 2-core machine).
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	// What GitHub Actions sets for the workflow, and no registry: an empty
	// cache, and a registry address where nothing listens.
	env := append(os.Environ(), "PLATFORMS=host", "GITHUB_REF_NAME=v"+npmVersion,
		"GITHUB_WORKSPACE="+root, "RUNNER_TEMP="+tmp,
		"npm_config_cache="+filepath.Join(tmp, "cache"), "npm_config_registry=http://127.0.0.1:9/",
		"npm_config_offline=true", "npm_config_update_notifier=false")
	steps := releaseSteps(t, filepath.Join(root, ".github/workflows/release.yml"))
	for _, st := range steps {
		if st.Name == "Publish" {
			break
		}
		if st.Run == "" {
			continue
		}
		cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", st.Run)
		cmd.Dir, cmd.Env = root, env
		began := time.Now()
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("release step %q: %v\n%s", st.Name, err, b)
		}
		t.Logf("release step %q: %s", st.Name, time.Since(began).Round(time.Millisecond))
	}
	if last := steps[len(steps)-1]; last.Name != "Publish" || !strings.Contains(last.Run, "npm publish") {
		t.Errorf("the release workflow's last step is %q, want Publish (npm publish)", last.Name)
	}

	// The launcher depends on all six platform packages, at its version.
	launcher := filepath.Join(tmp, "dist", "webmcp-cdp-"+npmVersion+".tgz")
	var manifest struct {
		Name     string            `json:"name"`
		Version  string            `json:"version"`
		License  string            `json:"license"`
		Bin      map[string]string `json:"bin"`
		Optional map[string]string `json:"optionalDependencies"`
		Scripts  map[string]string `json:"scripts"`
		Man      []string          `json:"man"`
	}
	if err := json.Unmarshal(tarFile(t, launcher, "package/package.json"), &manifest); err != nil {
		t.Fatal(err)
	}
	if manifest.Name != "webmcp-cdp" || manifest.Version != npmVersion || manifest.License != "MIT" || manifest.Bin["webmcp-cdp"] == "" {
		t.Errorf("launcher package.json: %+v", manifest)
	}
	if len(manifest.Scripts) != 0 {
		t.Errorf("the launcher has scripts (nothing may run at install): %v", manifest.Scripts)
	}
	for _, p := range []string{"linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64", "win32-x64", "win32-arm64"} {
		if v := manifest.Optional["webmcp-cdp-"+p]; v != npmVersion {
			t.Errorf("launcher: optional dependency webmcp-cdp-%s at %q, want %s", p, v, npmVersion)
		}
	}

	// The manual pages, written by pack.sh (`npm i -g` installs them).
	if !slices.Contains(manifest.Man, "man/webmcp-cdp.1") || !slices.Contains(manifest.Man, "man/webmcp-cdp-inspect.1") {
		t.Errorf("launcher: man %q, want the pages of webmcp-cdp and each command", manifest.Man)
	}
	for _, page := range manifest.Man {
		if b := tarFile(t, launcher, "package/"+page); !bytes.Contains(b, []byte(`"webmcp-cdp v`+npmVersion+`"`)) {
			t.Errorf("launcher: %s does not name version v%s:\n%.300s", page, npmVersion, b)
		}
	}

	// The workflow's install step put them in $RUNNER_TEMP/check.
	npx := func(args ...string) (stdout, stderr string, err error) {
		cmd := exec.CommandContext(ctx, "npx", append([]string{"--offline", "--no-install", "webmcp-cdp"}, args...)...)
		cmd.Dir, cmd.Env = filepath.Join(tmp, "check"), env
		var o, e bytes.Buffer
		cmd.Stdout, cmd.Stderr = &o, &e
		err = cmd.Run()
		return o.String(), e.String(), err
	}
	if o, e, err := npx("--version"); err != nil || strings.TrimSpace(o) != "webmcp-cdp version v"+npmVersion {
		t.Errorf("npx webmcp-cdp --version: %q (%v), want %q; stderr:\n%s", o, err, "webmcp-cdp version v"+npmVersion, e)
	}
	o, e, err := npx("demo", "--exit", "--headless", "--state-dir", "")
	if err != nil {
		t.Fatalf("npx webmcp-cdp demo --exit: %v\nstdout:\n%s\nstderr:\n%s", err, o, e)
	}
	for _, want := range []string{"registered 5 tools", "-> Added note #1: Hello", `-> {"count":2,"tags":{"demo":2}}`} {
		if !strings.Contains(e, want) {
			t.Errorf("npx webmcp-cdp demo --exit: stderr lacks %q:\n%s", want, e)
		}
	}
	if o != "" {
		t.Errorf("npx webmcp-cdp demo --exit wrote to stdout: %q", o)
	}
}

// workflowStep is a step of a GitHub Actions job.
type workflowStep struct {
	Name string `yaml:"name"`
	Uses string `yaml:"uses"`
	Run  string `yaml:"run"`
}

// releaseSteps are the steps of the release workflow's npm job.
func releaseSteps(t *testing.T, file string) []workflowStep {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		Jobs map[string]struct {
			Steps []workflowStep `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(b, &wf); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	steps := wf.Jobs["npm"].Steps
	if len(steps) == 0 {
		t.Fatalf("%s has no npm job with steps", file)
	}
	return steps
}

// tarFile is one file of a .tgz.
func tarFile(t *testing.T, tgz, name string) []byte {
	t.Helper()
	f, err := os.Open(tgz)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err != nil {
			t.Fatalf("%s has no %s (%v)", tgz, name, err)
		}
		if h.Name == name {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
}
