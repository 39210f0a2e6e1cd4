package mcpserver

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
)

// MCP 2026-07-28 clients mirror the arguments a tool marks with
// x-mcp-header in Mcp-Param-<Name> headers, so that gateways can route on
// them without reading the body; the server must refuse a call whose
// headers and body disagree (400, -32020). The go-sdk checks this for the
// tools it holds; page tools are the hub's, so this file checks theirs
// (the hub admits only page tools whose annotations keep the rules).

const (
	headerMethod      = "Mcp-Method"
	headerName        = "Mcp-Name"
	headerParamPrefix = "Mcp-Param-"
	base64Prefix      = "=?base64?"
	base64Suffix      = "?="
)

// paramHeaderCheck wraps the stateless handler: a tools/call of a page
// tool with x-mcp-header annotations has its Mcp-Param headers compared
// with its arguments before the SDK sees it, and a tasks method its
// Mcp-Name with its taskId (taskHeaderCheck). maxBody bounds the body it
// reads.
func (s *Server) paramHeaderCheck(next http.Handler, maxBody int64) http.Handler {
	next = taskHeaderCheck(next, maxBody)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get(headerMethod) != "tools/call" {
			next.ServeHTTP(w, r)
			return
		}
		// The SDK checks that Mcp-Name is the body's name; a mismatch
		// there is its error to give.
		rt, ok := s.hub.Tool(r.Header.Get(headerName))
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		bindings, _ := hub.ParamHeaders(rt.Tool.InputSchema)
		if len(bindings) == 0 {
			next.ServeHTTP(w, r)
			return
		}
		body, err := peekBody(w, r, maxBody)
		if err != nil {
			next.ServeHTTP(w, r) // the SDK reads and answers the same error
			return
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Params struct {
				Name      string                     `json:"name"`
				Arguments map[string]json.RawMessage `json:"arguments"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &msg) != nil || msg.Params.Name != rt.Name {
			next.ServeHTTP(w, r)
			return
		}
		if why := checkParamHeaders(r.Header, msg.Params.Arguments, bindings); why != "" {
			writeRPCError(w, http.StatusBadRequest, msg.ID, mcp.CodeHeaderMismatch,
				fmt.Sprintf("header mismatch: %s (send each Mcp-Param header as the tool's x-mcp-header asks, with the argument's value)", why))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// checkParamHeaders returns how h and args disagree on bindings, or "".
func checkParamHeaders(h http.Header, args map[string]json.RawMessage, bindings []hub.ParamHeader) string {
	for _, b := range bindings {
		name := headerParamPrefix + b.Name
		got := h.Get(name)
		raw, present := lookupArg(args, b.Path)
		if !present || string(raw) == "null" {
			if got != "" {
				return fmt.Sprintf("%s is set but the argument %q is absent", name, strings.Join(b.Path, "."))
			}
			continue
		}
		if got == "" {
			return fmt.Sprintf("%s is missing for the argument %q", name, strings.Join(b.Path, "."))
		}
		dec, ok := decodeHeaderValue(got)
		if !ok {
			return fmt.Sprintf("%s is not valid =?base64?…?= encoding", name)
		}
		want, ok := headerForm(raw)
		if !ok {
			return fmt.Sprintf("the argument %q is not a string, integer or boolean, so %s cannot carry it", strings.Join(b.Path, "."), name)
		}
		if dec != want {
			return fmt.Sprintf("%s is %q but the argument %q is %s", name, got, strings.Join(b.Path, "."), raw)
		}
	}
	return ""
}

// lookupArg follows path through nested argument objects.
func lookupArg(args map[string]json.RawMessage, path []string) (json.RawMessage, bool) {
	cur, ok := json.RawMessage(nil), false
	obj := args
	for i, p := range path {
		if cur, ok = obj[p]; !ok {
			return nil, false
		}
		if i < len(path)-1 {
			obj = nil
			if json.Unmarshal(cur, &obj) != nil {
				return nil, false
			}
		}
	}
	return cur, ok
}

// headerForm is the header text of a primitive JSON value (SEP-2243): a
// string as is, a boolean as true/false, an integer in the safe range in
// decimal.
func headerForm(raw json.RawMessage) (string, bool) {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return "", false
	}
	switch v := v.(type) {
	case string:
		return v, true
	case bool:
		return strconv.FormatBool(v), true
	case float64:
		if v != math.Trunc(v) || math.Abs(v) > 1<<53-1 {
			return "", false
		}
		return strconv.FormatInt(int64(v), 10), true
	}
	return "", false
}

// decodeHeaderValue undoes the =?base64?…?= wrapping of a header value
// that could not go as plain ASCII.
func decodeHeaderValue(v string) (string, bool) {
	enc, ok := strings.CutPrefix(v, base64Prefix)
	if !ok {
		return v, true
	}
	if enc, ok = strings.CutSuffix(enc, base64Suffix); !ok {
		return v, true
	}
	b, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return "", false
	}
	return string(b), true
}

// writeRPCError writes a JSON-RPC error response with an HTTP status.
// id is the request's id as it came (null when it had none).
func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, code int64, msg string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	resp := struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id}
	resp.Error.Code, resp.Error.Message = code, msg
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(resp)
}
