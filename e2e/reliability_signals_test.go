package e2e

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// signalRun is a launch whose temporary profile goes to a directory of the
// test's own (TMPDIR), so that the profile and the browser processes (whose
// command line names it) can be found afterwards.
type signalRun struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	tmp    string
	stderr *os.File // the read end of the stderr pipe
	log    *syncBuffer
}

// startSignalRun starts `launch --headless about:blank` with stderr a pipe
// the test holds, and returns once the log says the browser is ready.
// stdout is a pipe too when stdout is not nil.
func startSignalRun(t *testing.T, stdout *io.ReadCloser) *signalRun {
	t.Helper()
	r := &signalRun{tmp: t.TempDir(), log: &syncBuffer{}}
	r.cmd = exec.Command(binary, "launch", "--headless", "about:blank")
	r.cmd.Env = append(os.Environ(), "TMPDIR="+r.tmp)
	var err error
	if r.stdin, err = r.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if stdout != nil {
		if *stdout, err = r.cmd.StdoutPipe(); err != nil {
			t.Fatal(err)
		}
	} else {
		r.cmd.Stdout = io.Discard
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.stderr = pr
	r.cmd.Stderr = pw
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	t.Cleanup(func() {
		r.cmd.Process.Kill()
		r.cmd.Wait()
		pr.Close()
	})
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			r.log.Write([]byte(sc.Text() + "\n"))
			if strings.Contains(sc.Text(), "browser ready") {
				ready <- true
				return
			}
		}
		ready <- false
	}()
	bound := time.NewTimer(30 * time.Second)
	defer bound.Stop()
	select {
	case ok := <-ready:
		if !ok {
			t.Fatalf("webmcp-cdp closed stderr before the browser was ready:\n%s", r.log.String())
		}
	case <-bound.C:
		t.Fatalf("webmcp-cdp did not get ready:\n%s", r.log.String())
	}
	if len(browserPIDs(r.tmp)) == 0 {
		t.Fatalf("no browser process names the temporary directory %s", r.tmp)
	}
	return r
}

// profiles lists the temporary profiles left in the run's TMPDIR.
func (r *signalRun) profiles() []string {
	left, _ := filepath.Glob(filepath.Join(r.tmp, "webmcp-cdp-profile-*"))
	return left
}

// checkClean checks that no browser process is left and that the temporary
// profile is gone.
func (r *signalRun) checkClean(t *testing.T) {
	t.Helper()
	waitNoBrowser(t, r.tmp)
	if left := r.profiles(); len(left) > 0 {
		t.Errorf("the temporary profile was left behind: %v", left)
	}
}

// TestReliabilityBrokenStderr (issue 15, point 7): with stderr a pipe whose
// reader has gone, the next log line used to kill the process with SIGPIPE
// (status 141 in a shell) and leave the temporary profile. Now the client
// going away still ends the session cleanly (exit 0), with no browser and no
// profile left.
func TestReliabilityBrokenStderr(t *testing.T) {
	t.Parallel()
	r := startSignalRun(t, nil)
	r.stderr.Close() // the reader goes away
	r.stdin.Close()  // then the client: webmcp-cdp logs that, into the broken pipe
	if code := waitExit(t, r.cmd); code != 0 {
		t.Errorf("exit code %d (%v) after the client went away with stderr broken, want 0", code, r.cmd.ProcessState)
	}
	r.checkClean(t)
	reliabilityRow(t, "stderr pipe closed (SIGPIPE)", "exit 0, no browser or profile left")
}

// TestReliabilityBrokenStdout (issue 15, point 7): stdout is the MCP
// transport; when its reader goes away, the next reply fails and the
// session ends with exit 1, cleaned up (it used to die of SIGPIPE).
func TestReliabilityBrokenStdout(t *testing.T) {
	t.Parallel()
	var out io.ReadCloser
	r := startSignalRun(t, &out)
	out.Close()
	// Any request makes webmcp-cdp write a reply.
	io.WriteString(r.stdin, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n")
	if code := waitExit(t, r.cmd); code != 1 {
		t.Errorf("exit code %d (%v) after stdout broke, want 1", code, r.cmd.ProcessState)
	}
	r.checkClean(t)
	reliabilityRow(t, "stdout pipe closed (SIGPIPE)", "exit 1, no browser or profile left")
}

// TestReliabilitySIGHUP (issue 15, point 7): SIGHUP (the terminal closed)
// ends the session like SIGTERM: exit 0, no browser, no profile left. It
// used to kill the process at once and leave the profile.
func TestReliabilitySIGHUP(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			r := startSignalRun(t, nil)
			// Keep reading stderr, so that only the signal is under test.
			copied := make(chan struct{})
			go func() {
				io.Copy(r.log, r.stderr)
				close(copied)
			}()
			if err := r.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if code := waitExit(t, r.cmd); code != 0 {
				t.Errorf("exit code %d (%v) after %s, want 0\n%s", code, r.cmd.ProcessState, sig, r.log.String())
			}
			r.checkClean(t)
			// Stopping is said once, by webmcp-cdp: not by the SDK as an
			// ERROR "server run cancelled" (issue 29 point 4).
			select {
			case <-copied:
				if sdk := sdkChatter.FindString(r.log.String()); sdk != "" {
					t.Errorf("after %s, stderr has the SDK's %q at the default level:\n%s", sig, sdk, r.log.String())
				}
			case <-time.After(10 * time.Second):
				t.Errorf("stderr stayed open 10 s after webmcp-cdp exited")
			}
			reliabilityRow(t, "signal "+sig.String(), "exit 0, no browser or profile left")
		})
	}
}
