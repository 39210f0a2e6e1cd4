package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// stateWrites counts the state files renamed into place in dir while it
// runs, with inotify (every write of the state file ends in a rename).
func stateWrites(t *testing.T, dir string) (count func() int, stop func()) {
	t.Helper()
	fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC)
	if err != nil {
		t.Fatalf("inotify (this test needs Linux): %v", err)
	}
	wd, err := syscall.InotifyAddWatch(fd, dir, syscall.IN_MOVED_TO)
	if err != nil {
		t.Fatal(err)
	}
	n := make(chan int, 1)
	n <- 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 64<<10)
		for {
			k, err := syscall.Read(fd, buf)
			if err != nil || k <= 0 {
				return
			}
			for off := 0; off+syscall.SizeofInotifyEvent <= k; {
				ev := (*syscall.InotifyEvent)(unsafe.Pointer(&buf[off]))
				if ev.Mask&syscall.IN_IGNORED != 0 {
					return // the watch was removed: stop
				}
				end := off + syscall.SizeofInotifyEvent + int(ev.Len)
				if end > k {
					return
				}
				name := string(buf[off+syscall.SizeofInotifyEvent : end])
				if len(name) >= len("state.json") && name[:len("state.json")] == "state.json" {
					n <- <-n + 1
				}
				off += syscall.SizeofInotifyEvent + int(ev.Len)
			}
		}
	}()
	// Stopping removes the watch, whose IN_IGNORED event ends the reader,
	// and only then closes fd: closed while the reader was in Read, the
	// number could go to a file another test opens, read as events.
	return func() int { v := <-n; n <- v; return v }, func() {
		syscall.InotifyRmWatch(fd, uint32(wd))
		<-done
		syscall.Close(fd)
	}
}

// TestReliabilityStateFile (issue 15, point 9, and the kill -9 case): a page
// that changes its cached tool every 20 ms makes at most two state-file
// writes a second (it made about 50), and a process killed with SIGKILL at
// any moment leaves a state file that reads back.
func TestReliabilityStateFile(t *testing.T) {
	t.Parallel()
	base := serveFixtures(t)
	dir := t.TempDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	count, stop := stateWrites(t, dir)
	c := start(t, "launch", "--headless", "--state-dir", dir, base+"/hostile/churn.html")
	c.waitFor("the churning tool", hasSuffix("memo", 1))
	before := count()
	const window = 3 * time.Second
	time.Sleep(window) // the page churns; we count the writes it causes
	writes := count() - before
	stop()
	perSecond := float64(writes) / window.Seconds()
	if perSecond > 3 { // one write per 500 ms gap, plus the first
		t.Errorf("%d state-file writes in %s (%.1f/s) while a page churned its cached tool; want at most about 2/s", writes, window, perSecond)
	}
	c.cs.Close()
	reliabilityRow(t, "a page re-registers a cached tool every 20 ms", fmt.Sprintf("%.1f state-file writes a second", perSecond))

	// SIGKILL at moments spread over the churn: the state file always reads.
	const kills = 8
	bad := 0
	for i := range kills {
		cmd := exec.Command(binary, "launch", "--headless", "--state-dir", dir, base+"/hostile/churn.html")
		// stdin stays open with no client on it: the server runs until killed.
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		defer stdin.Close()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(800+137*i) * time.Millisecond) // kill at a different point of the write cycle each time
		cmd.Process.Kill()
		cmd.Wait()
		raw, err := os.ReadFile(filepath.Join(dir, "state.json"))
		var doc struct {
			Tools []json.RawMessage `json:"tools"`
		}
		if err != nil || json.Unmarshal(raw, &doc) != nil || len(doc.Tools) == 0 {
			bad++
			t.Errorf("after kill %d the state file does not read back: %v (%d bytes)", i+1, err, len(raw))
		}
	}
	reliabilityRow(t, "SIGKILL while a page churns cached tools", fmt.Sprintf("state file read back after %d of %d kills", kills-bad, kills))
}
