package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// The npm packages the tests use at test time (MCP-B page servers and
// polyfills, the TypeScript MCP client, esbuild) are pinned in
// e2e/js/package-lock.json and installed on first use. Bundles go to temp
// folders: no bundled third-party code is ever committed.
var npm struct {
	once sync.Once
	dir  string // e2e/js, absolute
	err  error
	out  string
}

// installPinned runs npm ci in e2e/<rel> (a folder with a package-lock.json)
// unless its node_modules is installed, and returns the folder's absolute
// path. ignoreScripts leaves out the packages' install scripts; env is
// added to npm's environment. out is npm's output when it fails.
//
// It holds the folder's install lock (npmLock) meanwhile, the lock .ci/run
// takes for its own npm ci there: the tests start while CI still installs
// the larger folders, and one that needs such a folder waits for that
// install to end rather than racing it.
func installPinned(rel string, ignoreScripts bool, env ...string) (dir string, out []byte, err error) {
	dir, err = filepath.Abs(rel)
	if err != nil {
		return "", nil, err
	}
	unlock, err := npmLock(dir)
	if err != nil {
		return "", nil, err
	}
	defer unlock()
	if _, err := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json")); err == nil {
		return dir, nil, nil
	}
	args := []string{"ci", "--no-audit", "--no-fund", "--silent"}
	if ignoreScripts {
		args = append(args, "--ignore-scripts")
	}
	cmd := exec.Command("npm", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err = cmd.CombinedOutput()
	return dir, out, err
}

// npmDir installs the pinned packages (npm ci) once per test binary and
// returns the absolute path of e2e/js, whose node_modules then holds them.
func npmDir(t testing.TB) string {
	t.Helper()
	npm.once.Do(func() {
		var b []byte
		npm.dir, b, npm.err = installPinned("js", false)
		npm.out = string(b)
	})
	if npm.err != nil {
		t.Fatalf("installing the pinned npm packages in e2e/js (npm ci) failed: %v\n%s\nThese tests need Node.js and npm with the npm registry reachable.", npm.err, npm.out)
	}
	return npm.dir
}

// bundle writes src (an ES module that may import the pinned packages) and
// bundles it with esbuild into an IIFE script in a temp folder; it returns
// the bundle's contents.
func bundle(t testing.TB, src string) string {
	t.Helper()
	return bundleIn(t, npmDir(t), src)
}

// bundleIn is bundle with the packages of the npm folder dir (installed),
// and esbuild's extra flags.
func bundleIn(t testing.TB, dir, src string, flags ...string) string {
	t.Helper()
	tmp := t.TempDir()
	// The entry sits beside node_modules so bare imports resolve; its name
	// is unique to this test.
	entry, err := os.CreateTemp(dir, ".entry-*.mjs")
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(entry.Name())
	if _, err := entry.WriteString(src); err != nil {
		t.Fatal(err)
	}
	entry.Close()
	out := filepath.Join(tmp, "bundle.js")
	cmd := exec.Command(filepath.Join(dir, "node_modules", ".bin", "esbuild"), append([]string{entry.Name(),
		"--bundle", "--format=iife", "--target=es2022", "--log-level=error", "--outfile=" + out}, flags...)...)
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("esbuild: %v\n%s", err, strings.TrimSpace(string(b)))
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestBundle: the pinned packages install and bundle into a browser script.
func TestBundle(t *testing.T) {
	t.Parallel()
	js := bundle(t, `import { z } from "zod"; globalThis.__zodOK = z.string().parse("ok");`)
	if !strings.Contains(js, "__zodOK") || len(js) < 1000 {
		t.Fatalf("the bundle does not hold the entry and zod: %d bytes", len(js))
	}
}

// npmLock takes the install lock of the npm folder dir: an exclusive
// flock(2) on dir/.npm-ci.lock (as flock(1) takes it in .ci/run), waiting
// while another process installs there. unlock releases it.
func npmLock(dir string) (unlock func(), err error) {
	f, err := os.OpenFile(filepath.Join(dir, ".npm-ci.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("the install lock of %s: %w", dir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("the install lock of %s: %w", dir, err)
	}
	return func() { f.Close() }, nil
}
