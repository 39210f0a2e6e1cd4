package bench

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// server is a webmcp-cdp subprocess under measure and the MCP client
// session connected to it.
type server struct {
	cmd     *exec.Cmd
	cs      *mcp.ClientSession
	changes chan struct{}
	// endpoint is the streamable HTTP endpoint ("" over stdio).
	endpoint string
	closing  sync.Once
}

// close ends the session and waits for the process (killing it after 5s).
// Over stdio the process exits on its own once its client is gone, which
// lets it write its CPU profile; over HTTP it is asked to stop with an
// interrupt, which lets it write its heap profile.
// Closing again does nothing.
func (s *server) close() {
	s.closing.Do(func() {
		s.cs.Close()
		if s.endpoint != "" {
			s.cmd.Process.Signal(os.Interrupt)
		}
		waitOrKill(s.cmd)
	})
}

// waitOrKill waits for cmd to exit, killing it after 5s.
func waitOrKill(cmd *exec.Cmd) {
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		<-done
	}
}

func newClient(changes chan struct{}) *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "webmcp-cdp-bench", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case changes <- struct{}{}:
			default:
			}
		},
	})
}

// startStdio starts `bin launch` on page and connects over stdio. env is
// added to the process's environment.
func startStdio(ctx context.Context, bin, page string, env []string) (*server, error) {
	return startCommand(ctx, bin, []string{"launch", "--headless", "--log-level", "warn", page}, env)
}

// startCommand starts bin with args and connects a go-sdk client over its
// stdio. env is added to the process's environment.
func startCommand(ctx context.Context, bin string, args, env []string) (*server, error) {
	s := &server{changes: make(chan struct{}, 1024)}
	s.cmd = exec.Command(bin, args...)
	s.cmd.Stderr = os.Stderr
	s.cmd.Env = append(os.Environ(), env...)
	cs, err := newClient(s.changes).Connect(ctx, &mcp.CommandTransport{Command: s.cmd}, nil)
	if err != nil {
		return nil, fmt.Errorf("starting %s over stdio: %w", bin, err)
	}
	s.cs = cs
	return s, nil
}

// startHTTP starts `bin launch --http` on page and connects over streamable
// HTTP. env is added to the process's environment.
func startHTTP(ctx context.Context, bin, page string, env []string) (*server, error) {
	return startHTTPProcess(ctx, bin, env, func(addr string) []string {
		return []string{"launch", "--headless", "--log-level", "warn", "--http", addr, page}
	})
}

// startHTTPProcess starts bin with the arguments args gives for a free
// address, and connects the go-sdk client over streamable HTTP to its
// endpoint /mcp there once it listens. env is added to the process's
// environment.
func startHTTPProcess(ctx context.Context, bin string, env []string, args func(addr string) []string) (*server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("finding a free port for the HTTP server: %w", err)
	}
	addr := ln.Addr().String()
	ln.Close()
	s := &server{changes: make(chan struct{}, 1024)}
	s.cmd = exec.Command(bin, args(addr)...)
	s.cmd.Stderr = os.Stderr
	s.cmd.Env = append(os.Environ(), env...)
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s over HTTP: %w", bin, err)
	}
	var cs *mcp.ClientSession
	for deadline := time.Now().Add(20 * time.Second); cs == nil; {
		cs, err = newClient(s.changes).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp"}, nil)
		if err != nil {
			if time.Now().After(deadline) {
				s.cmd.Process.Kill()
				s.cmd.Wait()
				return nil, fmt.Errorf("connecting to %s over HTTP: %w", bin, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	s.cs = cs
	s.endpoint = "http://" + addr + "/mcp"
	return s, nil
}

// caller returns a func making one tools/call of the echo tool name.
func caller(cs *mcp.ClientSession, name string) func(context.Context) error {
	params := &mcp.CallToolParams{Name: name, Arguments: map[string]any{"text": "x"}}
	return func(ctx context.Context) error {
		res, err := cs.CallTool(ctx, params)
		return callOutcome(name, res, err)
	}
}

// callOutcome is a tools/call's error, or its error result's, as an error.
func callOutcome(name string, res *mcp.CallToolResult, err error) error {
	if err != nil {
		return fmt.Errorf("tools/call %s: %w", name, err)
	}
	if res.IsError {
		return fmt.Errorf("tools/call %s answered with an error: %s", name, text(res))
	}
	return nil
}

// text joins the text content of a result.
func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, " ")
}

// waitTool waits until a tool named *_suffix is listed along with at least
// want page tools, and returns its routed name.
func waitTool(ctx context.Context, cs *mcp.ClientSession, suffix string, want int) (string, error) {
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		tools, err := listAll(ctx, cs)
		if err != nil {
			return "", err
		}
		if found := findTool(tools, suffix, want); found != "" {
			return found, nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return "", fmt.Errorf("the bench page's tools (one ending in _%s, %d in all) did not appear within 20s", suffix, want)
}

// findTool returns the routed name of a tool of tools named *_suffix when
// tools hold at least want page tools, or "".
func findTool(tools []*mcp.Tool, suffix string, want int) string {
	found, pageTools := "", 0
	for _, t := range tools {
		if !strings.HasPrefix(t.Name, "webmcp_") {
			pageTools++
		}
		if strings.HasSuffix(t.Name, "_"+suffix) {
			found = t.Name
		}
	}
	if pageTools < want {
		return ""
	}
	return found
}

// waitCount waits until n tab-level copies of a tool exist (n tabs loaded).
func waitCount(ctx context.Context, cs *mcp.ClientSession, suffix string, n int) error {
	deadline := time.Now().Add(2 * time.Minute)
	last := 0
	for time.Now().Before(deadline) {
		tools, err := listAll(ctx, cs)
		if err != nil {
			return err
		}
		count := 0
		for _, t := range tools {
			if strings.HasSuffix(t.Name, "_"+suffix) {
				count++
			}
		}
		// One site-level name plus one per tab once two or more tabs have it.
		if (n == 1 && count == 1) || count == n+1 {
			return nil
		}
		last = count
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%d tabs of the bench page did not all register their tools within 2m (%d names end in _%s)", n, last, suffix)
}

// listAll lists every page of tools (go-sdk serves 1000 a page).
func listAll(ctx context.Context, cs *mcp.ClientSession) ([]*mcp.Tool, error) {
	var all []*mcp.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("tools/list: %w", err)
		}
		all = append(all, t)
	}
	return all, nil
}
