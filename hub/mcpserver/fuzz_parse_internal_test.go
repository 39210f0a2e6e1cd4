package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FuzzRequestMeta reads a message's per-request _meta as the edge does:
// metaVersion (which revision's handler gets an HTTP request) and the
// stdio fast path's metaKind. Neither panics; a version metaVersion finds
// is the one encoding/json finds at params._meta; metaKind takes a
// 2026-07-28 _meta only when it is byte for byte one the SDK accepted.
func FuzzRequestMeta(f *testing.F) {
	good := `{"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true}},"io.modelcontextprotocol/clientInfo":{"name":"webmcp-cdp-bench","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`
	fc := &fastCalls{good: map[string]bool{good: true}}
	f.Fuzz(func(t *testing.T, body []byte) {
		v := metaVersion(body)
		if v != "" {
			var msg map[string]json.RawMessage
			var params map[string]json.RawMessage
			var meta map[string]json.RawMessage
			var want string
			if json.Unmarshal(body, &msg) != nil || json.Unmarshal(msg["params"], &params) != nil ||
				json.Unmarshal(params["_meta"], &meta) != nil || json.Unmarshal(meta[mcp.MetaKeyProtocolVersion], &want) != nil || want != v {
				t.Fatalf("metaVersion found %q, encoding/json %q in %s", v, want, body)
			}
		}
		var m struct {
			Params struct {
				Meta jsontext.Value `json:"_meta"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &m) != nil {
			return
		}
		if newProtocol, ok := fc.metaKind(m.Params.Meta); newProtocol && (!ok || string(m.Params.Meta) != good) {
			t.Fatalf("metaKind took %s as a 2026-07-28 _meta the SDK accepted", m.Params.Meta)
		}
	})
}

// FuzzRequestState looks up arbitrary requestState values of arbitrary
// callers: lookup never panics and finds a pending call only for the
// state the server signed for its latest question and the caller that made
// it. The seeds hold the states this key signs for the two pending calls'
// questions, an earlier question's (stale), and a call that is gone (a
// replay).
func FuzzRequestState(f *testing.F) {
	h := &hitl{key: bytes.Repeat([]byte{7}, 32), pending: map[string]*pendingCall{}}
	calls := []*pendingCall{{id: "00112233445566778899aabb", owner: "", round: 1}, {id: "ccddeeff0011223344556677", owner: "relay-1", round: 2}}
	for _, pc := range calls {
		h.add(pc)
	}
	latest := func(pc *pendingCall) string { return h.state(pc.id + "-" + strconv.Itoa(pc.round)) }
	f.Fuzz(func(t *testing.T, state, owner string) {
		pc, ok := h.lookup(state, owner)
		if ok && (state != latest(pc) || owner != pc.owner) {
			t.Fatalf("lookup(%q, %q) found the call %s of %q", state, owner, pc.id, pc.owner)
		}
		for _, c := range calls {
			if !ok && state == latest(c) && owner == c.owner {
				t.Fatalf("lookup(%q, %q) did not find the call %s it signed", state, owner, c.id)
			}
		}
	})
}

// FuzzStdioLine feeds arbitrary input to the stdio transport's reader
// (readLine, with a small buffer so that long lines come in chunks) and
// each line to decodeLine. Neither panics; readLine gives each line of the
// input in order, or says it is over the bound; decodeLine gives a message
// only for a JSON object, and otherwise an error code of JSON-RPC and an
// id only of a kind the client could have sent.
func FuzzStdioLine(f *testing.F) {
	const max = 256
	f.Fuzz(func(t *testing.T, input []byte) {
		r := bufio.NewReaderSize(bytes.NewReader(input), 16)
		rest := input
		for {
			line, over, err := readLine(r, max)
			want, after, found := bytes.Cut(rest, []byte("\n"))
			if found {
				want = append(want[:len(want):len(want)], '\n')
			}
			if over != (len(want) > max+1) {
				t.Fatalf("a line of %d bytes: over %v, bound %d", len(want), over, max)
			}
			if !over && !bytes.Equal(line, want) {
				t.Fatalf("read %q, want %q", line, want)
			}
			rest = after
			if trimmed := bytes.TrimSpace(line); !over && len(trimmed) > 0 {
				checkDecodeLine(t, trimmed)
			}
			if err != nil {
				if found && len(rest) > 0 {
					t.Fatalf("the reader stopped (%v) before %q", err, rest)
				}
				return
			}
		}
	})
}

// checkDecodeLine decodes one line and checks what decodeLine says of it.
func checkDecodeLine(t *testing.T, line []byte) {
	msg, id, code, why := decodeLine(line)
	if msg != nil {
		if line[0] != '{' || !json.Valid(line) {
			t.Fatalf("decoded a message from %q", line)
		}
		return
	}
	if code != jsonrpc.CodeParseError && code != jsonrpc.CodeInvalidRequest {
		t.Fatalf("code %d for %q", code, line)
	}
	if !strings.Contains(why, "Parse error") && !strings.Contains(why, "Invalid Request") {
		t.Fatalf("reason %q for %q", why, line)
	}
	switch id.(type) {
	case nil, string, float64:
	default:
		t.Fatalf("id %#v (%T) for %q", id, id, line)
	}
}
