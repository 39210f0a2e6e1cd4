package relay

import (
	"net/url"

	"github.com/coder/websocket"

	"github.com/webmcp-cdp/webmcp-cdp/hub/relay/proxy"
)

// The protocol and the proxy server live in package proxy, which imports no
// part of the hub. These names keep relay.X working for the code that used
// them before the split (cmd/webmcp-cdp, e2e, the connect side); new code
// may name proxy.X directly.

// The JSON-RPC error codes of the protocol (see package proxy).
const (
	CodeParseError       = proxy.CodeParseError
	CodeInvalidRequest   = proxy.CodeInvalidRequest
	CodeMethodNotFound   = proxy.CodeMethodNotFound
	CodeInvalidParams    = proxy.CodeInvalidParams
	CodeInternalError    = proxy.CodeInternalError
	CodeServerError      = proxy.CodeServerError
	CodeAlreadyConnected = proxy.CodeAlreadyConnected
)

// The methods and notifications of the protocol (see package proxy).
const (
	MethodAuthenticate   = proxy.MethodAuthenticate
	MethodAuthenticated  = proxy.MethodAuthenticated
	MethodHandshake      = proxy.MethodHandshake
	MethodListExtensions = proxy.MethodListExtensions
	MethodConnect        = proxy.MethodConnect
	MethodDisconnect     = proxy.MethodDisconnect
	MethodStatus         = proxy.MethodStatus
	MethodDisconnected   = proxy.MethodDisconnected
	MethodToolsList      = proxy.MethodToolsList
	MethodToolsCall      = proxy.MethodToolsCall
	MethodWaitForChanges = proxy.MethodWaitForChanges
	VersionMetaKey       = proxy.VersionMetaKey
)

// The message kinds (see package proxy).
const (
	KindRequest      = proxy.KindRequest
	KindNotification = proxy.KindNotification
	KindResponse     = proxy.KindResponse
)

// The protocol's types (see package proxy).
type (
	// Message is proxy.Message.
	Message = proxy.Message
	// Kind is proxy.Kind.
	Kind = proxy.Kind
	// Error is proxy.Error.
	Error = proxy.Error
	// Server is proxy.Server.
	Server = proxy.Server
	// ServerOptions is proxy.ServerOptions.
	ServerOptions = proxy.ServerOptions
	// Stats is proxy.Stats.
	Stats = proxy.Stats
	// HS256 is proxy.HS256.
	HS256 = proxy.HS256
	// Identity is proxy.Identity.
	Identity = proxy.Identity
	// Authenticator is proxy.Authenticator.
	Authenticator = proxy.Authenticator
	// DialOptions is proxy.DialOptions.
	DialOptions = proxy.DialOptions
	// StatusParams is proxy.StatusParams.
	StatusParams = proxy.StatusParams
	// AuthenticateResult is proxy.AuthenticateResult.
	AuthenticateResult = proxy.AuthenticateResult
	// AuthenticatedParams is proxy.AuthenticatedParams.
	AuthenticatedParams = proxy.AuthenticatedParams
	// HandshakeResult is proxy.HandshakeResult.
	HandshakeResult = proxy.HandshakeResult
	// ExtensionInfo is proxy.ExtensionInfo.
	ExtensionInfo = proxy.ExtensionInfo
	// ListExtensionsResult is proxy.ListExtensionsResult.
	ListExtensionsResult = proxy.ListExtensionsResult
	// ConnectResult is proxy.ConnectResult.
	ConnectResult = proxy.ConnectResult
	// DisconnectedParams is proxy.DisconnectedParams.
	DisconnectedParams = proxy.DisconnectedParams
	// WaitParams is proxy.WaitParams.
	WaitParams = proxy.WaitParams
	// WaitResult is proxy.WaitResult.
	WaitResult = proxy.WaitResult

	toolsCallParams = proxy.ToolsCallParams
)

// NewServer returns a proxy server: proxy.NewServer.
func NewServer(opts ServerOptions) (*Server, error) { return proxy.NewServer(opts) }

// NewHS256 returns an HS256 authenticator: proxy.NewHS256.
func NewHS256(secret []byte) (*HS256, error) { return proxy.NewHS256(secret) }

// ReadSecretFile reads a token secret: proxy.ReadSecretFile.
func ReadSecretFile(path string) ([]byte, error) { return proxy.ReadSecretFile(path) }

// ParseMessage parses and checks one message: proxy.ParseMessage.
func ParseMessage(data []byte) (*Message, *Error) { return proxy.ParseMessage(data) }

// CheckURL checks a relay URL: proxy.CheckURL.
func CheckURL(raw string, insecure bool) (*url.URL, error) { return proxy.CheckURL(raw, insecure) }

// IsLoopback reports whether host is a loopback address: proxy.IsLoopback.
func IsLoopback(host string) bool { return proxy.IsLoopback(host) }

// CloseReason returns the close status of a connection's error:
// proxy.CloseReason.
func CloseReason(err error) (code websocket.StatusCode, reason string, ok bool) {
	return proxy.CloseReason(err)
}

// SplitID splits a forwarded id into its connection and the client's own id:
// proxy.SplitID.
func SplitID(id string) (connection, original string, ok bool) { return proxy.SplitID(id) }

func isNull(v []byte) bool { return proxy.IsNull(v) }
