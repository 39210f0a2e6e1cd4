package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"time"
)

// The hidden flags of `webmcp-cdp bench` that run ForwardHTTP on the page
// and the address they name.
const (
	forwardHTTPFlag     = "--forward-http-page"
	forwardHTTPAddrFlag = "--forward-http-addr"
	forwardHTTPSSEFlag  = "--forward-http-sse"
	// forwardHTTPStatelessFlag makes the forwarder a 2026-07-28 server.
	forwardHTTPStatelessFlag = "--forward-http-stateless"
)

// ForwardHTTPMode is how the HTTP forwarder answers.
type ForwardHTTPMode struct {
	// SSE answers tools/call with an event stream of one event (as the
	// go-sdk server behind webmcp-cdp answers it) rather than
	// application/json.
	SSE bool
	// Stateless makes the forwarder a server of MCP 2026-07-28 only: its
	// server/discover names 2026-07-28, so the go-sdk client makes no
	// initialize and sends the per-request _meta in every request, and
	// every result carries what that client expects of the revision
	// (resultType "complete", serverInfo in _meta). It reads no _meta and
	// checks no header: the floor of a stateless server.
	Stateless bool
}

// maxForwardBody bounds the body of one POST to the HTTP forwarder: the
// go-sdk client's largest message, its initialize request, is well under
// 1 KB.
const maxForwardBody = 8 << 10

// forwardVersions are the protocol versions the HTTP forwarder answers
// initialize with, newest first: the go-sdk client's legacy versions. It
// names no 2026-07-28 version in its server/discover answer, as the
// stateful go-sdk server behind `webmcp-cdp launch --http` does not, so
// that the go-sdk client falls back to initialize and makes its calls the
// way it makes them to webmcp-cdp.
var forwardVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

// ForwardHTTP is the floor of one process behind an MCP client's
// streamable HTTP transport, as Forward is over stdio: it launches a
// browser of its own on page, as raw CDP does, and serves POST /mcp on addr
// with hand-written JSON-RPC (forwardHandler), each tools/call answered
// after exactly one Runtime.callFunctionOn into the page, as mode says. It
// serves until ctx ends. `webmcp-cdp bench` starts it as a subprocess (the
// hidden flags --forward-http-page, --forward-http-addr,
// --forward-http-sse and --forward-http-stateless) and measures it with
// the go-sdk client, like the server over HTTP.
func ForwardHTTP(ctx context.Context, page, addr string, mode ForwardHTTPMode) error {
	if addr == "" {
		return fmt.Errorf("the HTTP forwarder needs an address to listen on: pass %s HOST:PORT", forwardHTTPAddrFlag)
	}
	rb, err := newRawBrowser(ctx, page)
	if err != nil {
		return err
	}
	defer rb.close()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("the HTTP forwarder listening on %s: %w", addr, err)
	}
	srv := &http.Server{Handler: forwardHandler(rb.call, mode), ReadHeaderTimeout: 5 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("the HTTP forwarder stopped serving: %w", err)
	case <-ctx.Done():
		srv.Close()
		return nil
	}
}

// ForwardHandler is the HTTP forwarder's handler of /mcp with call in place
// of the call into the page: the floor of the in-process benchmarks of the
// HTTP edge (hub/mcpserver's BenchmarkCallHTTP).
func ForwardHandler(call func(context.Context) error, mode ForwardHTTPMode) http.Handler {
	return forwardHandler(call, mode)
}

// forwardRequest is the part of a JSON-RPC message the forwarder reads.
type forwardRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

// forwardHandler serves the streamable HTTP endpoint /mcp of the HTTP
// forwarder without sessions: a POST carries one JSON-RPC message;
// notifications and responses get 202; initialize, server/discover, ping,
// tools/list (one tool, echo_0) and tools/call of echo_0 get an
// application/json answer, tools/call after exactly one call of call (its
// answer one event of an event stream when mode.SSE is set). A GET (the
// client's event stream) gets 405, as the transport allows. With
// mode.Stateless, server/discover names 2026-07-28 and each result carries
// resultType and serverInfo (statelessResult).
func forwardHandler(call func(context.Context) error, mode ForwardHTTPMode) http.Handler {
	discover := `{"supportedVersions":["2025-11-25","2025-06-18","2025-03-26","2024-11-05"],"capabilities":{"tools":{}}}`
	list := `{"tools":[{"name":"echo_0","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}}]}`
	ping, callResult := `{}`, forwardCallResult
	if mode.Stateless {
		discover = statelessResult(`"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}`)
		list, ping, callResult = statelessResult(list[1:]), statelessResult("}"), statelessResult(forwardCallResult[1:])
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/mcp" {
			http.NotFound(w, r)
			return
		}
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "the forwarder serves POST only", http.StatusMethodNotAllowed)
			return
		}
		var body bytes.Buffer
		if _, err := body.ReadFrom(http.MaxBytesReader(w, r.Body, maxForwardBody)); err != nil {
			status := http.StatusBadRequest
			if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
				status = http.StatusRequestEntityTooLarge
			}
			writeRPCError(w, status, nil, -32700, "reading the request body: "+err.Error())
			return
		}
		var req forwardRequest
		if err := json.Unmarshal(body.Bytes(), &req); err != nil {
			writeRPCError(w, http.StatusBadRequest, nil, -32700, "the body is not one JSON-RPC message: "+err.Error())
			return
		}
		if req.JSONRPC != "2.0" {
			writeRPCError(w, http.StatusBadRequest, nil, -32600, `jsonrpc is not "2.0"`)
			return
		}
		if len(req.ID) == 0 || req.Method == "" { // a notification or a response
			w.WriteHeader(http.StatusAccepted)
			return
		}
		if c := req.ID[0]; c != '"' && c != '-' && (c < '0' || c > '9') {
			writeRPCError(w, http.StatusBadRequest, nil, -32600, "the id is neither a number nor a string")
			return
		}
		switch req.Method {
		case "initialize":
			var p struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			json.Unmarshal(req.Params, &p) // a missing version gets the newest
			v := forwardVersions[0]
			if slices.Contains(forwardVersions, p.ProtocolVersion) {
				v = p.ProtocolVersion
			}
			writeResult(w, req.ID, `{"protocolVersion":"`+v+`","capabilities":{"tools":{}},`+forwardServerInfo+`}`)
		case "server/discover":
			writeResult(w, req.ID, discover)
		case "ping":
			writeResult(w, req.ID, ping)
		case "tools/list":
			writeResult(w, req.ID, list)
		case "tools/call":
			var p struct {
				Name string `json:"name"`
			}
			if json.Unmarshal(req.Params, &p) != nil || p.Name != "echo_0" {
				writeRPCError(w, http.StatusOK, req.ID, -32602, "the forwarder has one tool, echo_0")
				return
			}
			answer := writeResult
			if mode.SSE {
				answer = writeEvent
			}
			if err := call(r.Context()); err != nil {
				failed := `"content":[{"type":"text","text":` + jsonString(err.Error()) + `}],"isError":true}`
				if mode.Stateless {
					answer(w, req.ID, statelessResult(failed))
				} else {
					answer(w, req.ID, "{"+failed)
				}
				return
			}
			answer(w, req.ID, callResult)
		default:
			writeRPCError(w, http.StatusOK, req.ID, -32601, "the forwarder does not serve the method "+req.Method)
		}
	})
}

// statelessResult is a result of MCP 2026-07-28 as the go-sdk server
// gives it, whose other members are rest (JSON object members and the
// closing brace): resultType "complete" and the server's serverInfo in
// _meta first.
func statelessResult(rest string) string {
	head := `{"resultType":"complete","_meta":{"io.modelcontextprotocol/` + forwardServerInfo[1:] + `}`
	if rest == "}" {
		return head + rest
	}
	return head + "," + rest
}

// writeResult answers the request id with result (JSON text).
func writeResult(w http.ResponseWriter, id json.RawMessage, result string) {
	writeJSON(w, http.StatusOK, appendResult(nil, id, result))
}

// writeEvent answers the request id with result (JSON text) in an event
// stream of one message event.
func writeEvent(w http.ResponseWriter, id json.RawMessage, result string) {
	b := append([]byte("event: message\ndata: "), appendResult(nil, id, result)...)
	b = append(b, "\n\n"...)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	w.Write(b)
}

// appendResult appends the JSON-RPC answer to id with result to b.
func appendResult(b []byte, id json.RawMessage, result string) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"result":`...)
	b = append(b, result...)
	return append(b, '}')
}

// writeRPCError answers the request id (null when nil) with a JSON-RPC
// error, in an HTTP answer of status.
func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, code int, msg string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	b := make([]byte, 0, len(id)+len(msg)+64)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"error":{"code":`...)
	b = strconv.AppendInt(b, int64(code), 10)
	b = append(b, `,"message":`...)
	b = append(b, jsonString(msg)...)
	b = append(b, "}}"...)
	writeJSON(w, status, b)
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}

// jsonString is s as a JSON string.
func jsonString(s string) string {
	b, _ := json.Marshal(s) // a string always encodes
	return string(b)
}
