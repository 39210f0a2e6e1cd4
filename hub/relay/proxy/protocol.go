package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// The JSON-RPC 2.0 error codes of the protocol (seed 001's table).
const (
	// CodeParseError: the message is not valid JSON.
	CodeParseError = -32700
	// CodeInvalidRequest: a required member is missing or has the wrong type,
	// or the id uses a reserved prefix.
	CodeInvalidRequest = -32600
	// CodeMethodNotFound: nobody serves the method.
	CodeMethodNotFound = -32601
	// CodeInvalidParams: the params have the wrong type or lack a member.
	CodeInvalidParams = -32602
	// CodeInternalError: the server failed while handling the request.
	CodeInternalError = -32603
	// CodeServerError: an application error (authentication, routing, a
	// browser action that failed, a limit).
	CodeServerError = -32000
	// CodeAlreadyConnected: connect from a client that is connected already.
	CodeAlreadyConnected = -32001
)

// The methods the proxy itself handles, and the notifications it sends.
const (
	MethodAuthenticate   = "authenticate"
	MethodAuthenticated  = "authenticated"
	MethodHandshake      = "mcp_handshake"
	MethodListExtensions = "list_extensions"
	MethodConnect        = "connect"
	MethodDisconnect     = "disconnect"
	MethodStatus         = "status"
	MethodDisconnected   = "disconnected"
)

// Reserved id prefixes: "proxy:" for requests the proxy makes, "ext:" for
// the rare request a browser makes. Clients may use neither.
const (
	ProxyIDPrefix = "proxy:"
	ExtIDPrefix   = "ext:"
)

// Bounds on the parts of a message; the WebSocket read limit bounds the
// whole.
const (
	maxIDBytes     = 256
	maxMethodBytes = 128
)

// StatusTimeLayout is the layout of the status notification's timestamp, as
// in the seed: 2025-10-20T21:43:53.163+0200.
const StatusTimeLayout = "2006-01-02T15:04:05.000-0700"

// Error is a JSON-RPC error object. It is also a Go error: Client.Call
// returns the error a response carried as an *Error.
type Error struct {
	Code    int             `json:"code"`           // one of the Code constants, or the browser's own
	Message string          `json:"message"`        // worded for the person reading it
	Data    json.RawMessage `json:"data,omitempty"` // optional detail
}

// Error returns the message with the code.
func (e *Error) Error() string { return fmt.Sprintf("%s (JSON-RPC error %d)", e.Message, e.Code) }

// Errorf makes an *Error with a formatted message.
func Errorf(code int, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Kind says what a message is.
type Kind int

// The kinds of message.
const (
	// KindRequest has a method and an id.
	KindRequest Kind = iota + 1
	// KindNotification has a method and no id.
	KindNotification
	// KindResponse has an id and a result or an error.
	KindResponse
)

// Message is one parsed JSON-RPC 2.0 message. Members outside JSON-RPC and
// the protocol are dropped: forwarding always rebuilds a message from these
// fields, so nothing that was not checked is passed on.
type Message struct {
	// ID is the id exactly as received (a JSON string or number), or nil.
	ID json.RawMessage
	// Method is the method of a request or notification.
	Method string
	// Params is the params (an object or an array), or nil.
	Params json.RawMessage
	// Result is the result of a response, or nil.
	Result json.RawMessage
	// Error is the error of a response, or nil.
	Error *Error
	// ConnectionID is the optional routing hint clients may add; the proxy
	// never forwards it.
	ConnectionID string

	kind Kind
	// idKey is the id as text: a string id decoded, a number as written.
	idKey string
	// idString says the id is a JSON string.
	idString bool
	// nullID says the id is null (allowed in error answers only).
	nullID bool
}

// Kind returns what the message is.
func (m *Message) Kind() Kind { return m.kind }

// IDKey returns the id as text: a string id decoded (so escapes cannot hide
// a reserved prefix), a number as it was written. It is "" without an id.
func (m *Message) IDKey() string { return m.idKey }

// IDIsString reports whether the id is a JSON string (forwarded ids are).
func (m *Message) IDIsString() bool { return m.idString }

// Reserved reports whether the id is a string with a reserved prefix.
func (m *Message) Reserved() bool {
	return m.idString && (strings.HasPrefix(m.idKey, ProxyIDPrefix) || strings.HasPrefix(m.idKey, ExtIDPrefix))
}

// member reports whether a top-level member is one the parser reads; others
// are dropped.
func member(key string) bool {
	switch key {
	case "jsonrpc", "id", "method", "params", "result", "error", "connectionId":
		return true
	}
	return false
}

// ParseMessage parses and checks one message. On failure the *Error is what
// to answer; the returned message still carries the id when the id itself
// was well formed, so the answer can name it (else answer with a null id).
// Batches are not part of the protocol and are refused.
func ParseMessage(data []byte) (*Message, *Error) {
	m := &Message{}
	if !json.Valid(data) {
		return m, Errorf(CodeParseError, "Parse error: the message is not valid JSON")
	}
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	switch {
	case len(trimmed) > 0 && trimmed[0] == '[':
		return m, Errorf(CodeInvalidRequest, "Invalid Request: batches are not supported; send one JSON object per message")
	case len(trimmed) == 0 || trimmed[0] != '{':
		return m, Errorf(CodeInvalidRequest, "Invalid Request: a message must be a JSON object")
	}
	raw := make(map[string]json.RawMessage, 6)
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil { // '{'
		return m, Errorf(CodeParseError, "Parse error: %v", err)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return m, Errorf(CodeParseError, "Parse error: %v", err)
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return m, Errorf(CodeParseError, "Parse error: %v", err)
		}
		if !member(key) {
			continue
		}
		if _, dup := raw[key]; dup {
			return m, Errorf(CodeInvalidRequest, "Invalid Request: the member %q appears twice", key)
		}
		raw[key] = v
	}

	// The id first, so that every later error can name it.
	if v, ok := raw["id"]; ok {
		if err := m.setID(v); err != nil {
			return m, err
		}
	}
	var version string
	if err := json.Unmarshal(raw["jsonrpc"], &version); err != nil || version != "2.0" {
		return m, Errorf(CodeInvalidRequest, `Invalid Request: "jsonrpc" must be "2.0"`)
	}
	if v, ok := raw["method"]; ok {
		if err := json.Unmarshal(v, &m.Method); err != nil || m.Method == "" {
			return m, Errorf(CodeInvalidRequest, `Invalid Request: "method" must be a non-empty string`)
		}
		if len(m.Method) > maxMethodBytes {
			return m, Errorf(CodeInvalidRequest, "Invalid Request: the method name is longer than %d bytes", maxMethodBytes)
		}
	}
	if v, ok := raw["params"]; ok && !IsNull(v) {
		if c := FirstByte(v); c != '{' && c != '[' {
			return m, Errorf(CodeInvalidRequest, `Invalid Request: "params" must be an object or an array`)
		}
		m.Params = v
	}
	if v, ok := raw["connectionId"]; ok {
		if err := json.Unmarshal(v, &m.ConnectionID); err != nil {
			return m, Errorf(CodeInvalidRequest, `Invalid Request: "connectionId" must be a string`)
		}
	}
	_, hasResult := raw["result"]
	errRaw, hasError := raw["error"]
	if m.nullID && (m.Method != "" || !hasError) {
		m.ID, m.nullID = nil, false
		return m, Errorf(CodeInvalidRequest, "Invalid Request: the id must be a string or a number")
	}
	if m.Method != "" {
		if hasResult || hasError {
			return m, Errorf(CodeInvalidRequest, `Invalid Request: a request cannot carry "result" or "error"`)
		}
		m.kind = KindNotification
		if m.ID != nil {
			m.kind = KindRequest
		}
		return m, nil
	}
	if _, ok := raw["method"]; ok {
		return m, Errorf(CodeInvalidRequest, `Invalid Request: "method" must be a non-empty string`)
	}
	if m.ID == nil {
		return m, Errorf(CodeInvalidRequest, `Invalid Request: "method" is missing`)
	}
	if hasResult == hasError {
		return m, Errorf(CodeInvalidRequest, `Invalid Request: a response needs exactly one of "result" and "error"`)
	}
	if hasResult {
		m.Result = raw["result"]
	} else {
		var e Error
		if FirstByte(errRaw) != '{' || json.Unmarshal(errRaw, &e) != nil || !hasMembers(errRaw, "code", "message") {
			return m, Errorf(CodeInvalidRequest, `Invalid Request: "error" must be an object with an integer "code" and a string "message"`)
		}
		m.Error = &e
	}
	m.kind = KindResponse
	return m, nil
}

// setID checks and records the id: a string or a number, within bounds.
func (m *Message) setID(v json.RawMessage) *Error {
	switch c := FirstByte(v); {
	case c == '"':
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return Errorf(CodeInvalidRequest, "Invalid Request: the id is not a valid string")
		}
		if len(s) > maxIDBytes {
			return Errorf(CodeInvalidRequest, "Invalid Request: the id is longer than %d bytes", maxIDBytes)
		}
		m.ID, m.idKey, m.idString = v, s, true
	case c == '-' || (c >= '0' && c <= '9'):
		if len(v) > 64 {
			return Errorf(CodeInvalidRequest, "Invalid Request: the id is longer than 64 digits")
		}
		m.ID, m.idKey = v, string(v)
	case c == 'n' && IsNull(v):
		// Only an error answer to a message whose id could not be read has a
		// null id; ParseMessage refuses it anywhere else.
		m.ID, m.nullID = v, true
	default:
		return Errorf(CodeInvalidRequest, "Invalid Request: the id must be a string or a number")
	}
	return nil
}

// hasMembers reports whether the JSON object obj has all the keys, with an
// integer code when "code" is among them.
func hasMembers(obj json.RawMessage, keys ...string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(obj, &m) != nil {
		return false
	}
	for _, k := range keys {
		v, ok := m[k]
		if !ok {
			return false
		}
		if k == "code" {
			var n int
			if json.Unmarshal(v, &n) != nil {
				return false
			}
		}
	}
	return true
}

// FirstByte returns the first byte of v after white space, or 0: what kind
// of JSON value v holds.
func FirstByte(v []byte) byte {
	v = bytes.TrimLeft(v, " \t\r\n")
	if len(v) == 0 {
		return 0
	}
	return v[0]
}

// IsNull reports whether v is the JSON null.
func IsNull(v []byte) bool { return string(bytes.TrimSpace(v)) == "null" }

// wire is the shape of every message written.
type wire struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// encode writes a message. It only fails on values that cannot be JSON,
// which the callers never pass; the fallback keeps the peer answered.
func encode(w wire) []byte {
	w.JSONRPC = "2.0"
	b, err := json.Marshal(w)
	if err != nil {
		fb, _ := json.Marshal(wire{JSONRPC: "2.0", ID: w.ID, Error: Errorf(CodeInternalError, "Internal error: encoding the message: %v", err)})
		return fb
	}
	return b
}

// marshalParams turns a value into params or a result; nil becomes {}.
func marshalParams(v any) (json.RawMessage, error) {
	switch x := v.(type) {
	case nil:
		return json.RawMessage(`{}`), nil
	case json.RawMessage:
		if len(x) == 0 || IsNull(x) {
			return json.RawMessage(`{}`), nil
		}
		return x, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encoding the params: %w", err)
	}
	if IsNull(b) {
		return json.RawMessage(`{}`), nil
	}
	return b, nil
}

// EncodeRequest writes a request (or, with a nil id, a notification).
func EncodeRequest(id json.RawMessage, method string, params any) []byte {
	p, err := marshalParams(params)
	if err != nil {
		p = json.RawMessage(`{}`)
	}
	return encode(wire{ID: id, Method: method, Params: p})
}

// encodeNotification writes a notification.
func encodeNotification(method string, params any) []byte {
	return EncodeRequest(nil, method, params)
}

// EncodeResult writes a successful response. The result is always present,
// {} when there is nothing to say (the seed's rule).
func EncodeResult(id json.RawMessage, result any) []byte {
	r, err := marshalParams(result)
	if err != nil {
		return EncodeError(id, Errorf(CodeInternalError, "Internal error: %v", err))
	}
	return encode(wire{ID: id, Result: r})
}

// EncodeError writes an error response; a nil id becomes null.
func EncodeError(id json.RawMessage, e *Error) []byte {
	if id == nil {
		id = json.RawMessage(`null`)
	}
	return encode(wire{ID: id, Error: e})
}

// stringID returns the JSON string s as an id.
func stringID(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

// MapID returns the id the proxy forwards for a client's request: the
// client's connection id, a colon, and the client's id as text.
func MapID(connectionID string, m *Message) string { return connectionID + ":" + m.idKey }

// SplitID splits a forwarded id into the connection part and the client's
// id; ok is false for ids without a colon (direct mode).
func SplitID(id string) (connection, original string, ok bool) {
	return strings.Cut(id, ":")
}

// StatusParams is the status notification: whether the recipient is
// connected, and how many MCP clients are connected to the same browser.
type StatusParams struct {
	Connected bool   `json:"connected"`  // the recipient is connected
	PeerCount int    `json:"peer_count"` // MCP clients connected to the browser
	Timestamp string `json:"timestamp"`  // in StatusTimeLayout
}

func newStatus(connected bool, peers int, now time.Time) StatusParams {
	return StatusParams{Connected: connected, PeerCount: peers, Timestamp: now.Format(StatusTimeLayout)}
}

// The results and params of the control methods, with the seed's names.
type (
	// AuthenticateResult is the browser's answer to authenticate.
	AuthenticateResult struct {
		Name        string `json:"name"`        // shown to clients
		AccessToken string `json:"accessToken"` // the browser's JWT
	}
	// AuthenticatedParams is the authenticated notification.
	AuthenticatedParams struct {
		UserID      string `json:"user_id"`      // the token's sub
		ExtensionID string `json:"extension_id"` // the id clients connect to
	}
	// HandshakeParams is mcp_handshake's params.
	HandshakeParams struct {
		AccessToken string `json:"accessToken"` // the client's JWT
	}
	// HandshakeResult is mcp_handshake's result.
	HandshakeResult struct {
		Authenticated bool   `json:"authenticated"` // always true (a failure is an error)
		UserID        string `json:"user_id"`       // the token's sub
		MCPClientID   string `json:"mcp_client_id"` // this connection's id, for logs
	}
	// ExtensionInfo is one browser in list_extensions.
	ExtensionInfo struct {
		ID        string `json:"id"`        // for connect
		Name      string `json:"name"`      // the browser's name
		Connected bool   `json:"connected"` // listed browsers are connected
	}
	// ListExtensionsResult is list_extensions's result.
	ListExtensionsResult struct {
		Extensions []ExtensionInfo `json:"extensions"` // the user's browsers; never null
	}
	// ConnectParams is connect's params.
	ConnectParams struct {
		ExtensionID string `json:"extension_id"` // from list_extensions
	}
	// ConnectResult is connect's result.
	ConnectResult struct {
		ConnectionID  string `json:"connection_id"`  // the prefix of forwarded ids
		ExtensionID   string `json:"extension_id"`   // the browser connected to
		ExtensionName string `json:"extension_name"` // its name
	}
	// DisconnectResult is disconnect's result.
	DisconnectResult struct {
		Disconnected bool `json:"disconnected"` // always true
	}
	// DisconnectedParams is the disconnected notification.
	DisconnectedParams struct {
		ConnectionID string `json:"connection_id"` // the connection that ended
		Reason       string `json:"reason"`        // "Extension closed", maybe with why
	}
)
