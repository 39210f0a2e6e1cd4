package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// rawStdio is webmcp-cdp run as a stdio server with raw pipes, so a test can
// send what no MCP client would.
type rawStdio struct {
	cmd     *exec.Cmd
	in      io.WriteCloser
	replies chan map[string]any
	stderr  *syncBuffer
}

func startRawStdio(t *testing.T, args ...string) *rawStdio {
	t.Helper()
	cmd := exec.Command(binary, args...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	r := &rawStdio{cmd: cmd, in: in, replies: make(chan map[string]any, 64), stderr: &syncBuffer{}}
	cmd.Stderr = r.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	go func() {
		defer close(r.replies)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				r.replies <- m
			}
		}
	}()
	return r
}

func (r *rawStdio) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(r.in, line+"\n"); err != nil {
		t.Fatalf("writing to webmcp-cdp: %v\n%s", err, r.stderr.String())
	}
}

// reply returns the next reply that is a response (notifications skipped).
func (r *rawStdio) reply(t *testing.T) map[string]any {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case m, ok := <-r.replies:
			if !ok {
				t.Fatalf("webmcp-cdp closed stdout (it exited):\n%s", r.stderr.String())
			}
			if _, isNote := m["method"]; !isNote {
				return m
			}
		case <-timeout:
			t.Fatalf("no reply from webmcp-cdp:\n%s", r.stderr.String())
		}
	}
}

// TestReliabilityStdioBadLines (issue 15): each line that used to end the
// server with exit 0 and no reply now gets a JSON-RPC error, and the next
// valid request is answered by the same process.
func TestReliabilityStdioBadLines(t *testing.T) {
	t.Parallel()
	base := serveFixtures(t)
	r := startRawStdio(t, "launch", "--headless", base+"/notes/")
	r.initialize(t)
	r.sendBadLines(t, "stdio")
	// The end of stdin is the client going away: a clean exit.
	r.in.Close()
	if code := waitExit(t, r.cmd); code != 0 {
		t.Errorf("exit code %d after stdin closed, want 0\n%s", code, r.stderr.String())
	}
}

// TestReliabilityConnectStdioBadLines (issue 15): the same bad lines sent to
// `connect` (a relay's browser served on stdio): a real relay, a browser side
// with real Chromium, and connect as a subprocess. Each line gets its error
// reply, the session goes on (the next ping is answered, and at the end
// tools/list still holds the remote page's tool), and closing stdin exits 0.
func TestReliabilityConnectStdioBadLines(t *testing.T) {
	t.Parallel()
	base := serveFixtures(t)
	rel := startRelay(t)
	alice := rel.token("alice")
	rel.startBrowserSide(t, alice, "bad-lines-chromium", base+"/current/")
	r := startRawStdio(t, "connect", "--relay", rel.url("/mcp"), "--token", alice)
	r.initialize(t)
	r.sendBadLines(t, "connect stdio")

	// The relay side still works: the remote page's echo tool is listed
	// (polled: the browser side may still be sending its tools).
	listed := false
	for id, deadline := 1000, time.Now().Add(20*time.Second); !listed && time.Now().Before(deadline); id++ {
		r.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, id))
		m := r.reply(t)
		res, _ := m["result"].(map[string]any)
		if res == nil {
			t.Fatalf("tools/list after the bad lines got %.300v", m)
		}
		tools, _ := res["tools"].([]any)
		for _, tool := range tools {
			if name, _ := tool.(map[string]any)["name"].(string); strings.HasSuffix(name, "echo") {
				listed = true
			}
		}
		if !listed {
			time.Sleep(50 * time.Millisecond) // poll interval: r.reply passes over notifications, list_changed among them
		}
	}
	if !listed {
		t.Errorf("tools/list after the bad lines never held the remote page's echo tool")
	}
	reliabilityRow(t, "connect stdio: tools/list after the bad lines", "the remote page's tool listed")

	r.in.Close()
	if code := waitExit(t, r.cmd); code != 0 {
		t.Errorf("connect's exit code %d after stdin closed, want 0\n%s", code, r.stderr.String())
	}
}

// initialize opens the MCP session.
func (r *rawStdio) initialize(t *testing.T) {
	t.Helper()
	r.send(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
	if m := r.reply(t); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	r.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// sendBadLines sends each line that used to end a stdio server, checks it
// gets its JSON-RPC error and that a ping after it is answered, and logs a
// reliability row for each, its scenario starting with face.
func (r *rawStdio) sendBadLines(t *testing.T, face string) {
	t.Helper()
	for i, tc := range []struct {
		name, line string
		code       float64
	}{
		{"not JSON", `{not json`, -32700},
		{"a closing brace", `}`, -32700},
		{"an empty batch", `[]`, -32600},
		{"null", `null`, -32600},
		{"a method that is a number", `{"jsonrpc":"2.0","id":5,"method":5}`, -32600},
		{"JSON-RPC 1.0", `{"jsonrpc":"1.0","id":6,"method":"ping"}`, -32600},
		{"an object id", `{"jsonrpc":"2.0","id":{},"method":"ping"}`, -32600},
		{"binary bytes", "\x00\x01\x02\xfe\xff", -32700},
		{"100k nested brackets", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","arguments":{"a":` +
			strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}}}`, -32700},
		{"a 50 MB line", `{"jsonrpc":"2.0","id":8,"method":"ping","params":{"x":"` + strings.Repeat("a", 50<<20) + `"}}`, -32600},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r.send(t, tc.line)
			m := r.reply(t)
			e, _ := m["error"].(map[string]any)
			if e == nil || e["code"] != tc.code {
				t.Errorf("reply %.300v, want error %v", m, tc.code)
			}
			id := 100 + i
			r.send(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, id))
			if m := r.reply(t); m["id"] != float64(id) || m["result"] == nil {
				t.Errorf("the ping after it got %.300v", m)
			}
			reliabilityRow(t, face+": "+tc.name, fmt.Sprintf("error %v, then the next request answered", tc.code))
		})
	}
}

// reliabilityRow logs one row of the reliability table (docs/reliability.md
// is made from these lines): the scenario, its measured figure, and whether
// the test passed.
func reliabilityRow(t *testing.T, scenario, figure string) {
	t.Helper()
	status := "pass"
	if t.Failed() {
		status = "FAIL"
	}
	t.Logf("RELIABILITY | %s | %s | %s", scenario, figure, status)
}
