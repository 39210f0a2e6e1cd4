package proxy

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func TestParseMessage(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		kind     Kind
		code     int    // expected error code, 0 for none
		id       string // expected raw id ("" for none)
		idKey    string
		reserved bool
	}{
		// The seed's own examples.
		{name: "seed authenticate request", in: `{"jsonrpc":"2.0","id":"proxy:1","method":"authenticate","params":{}}`, kind: KindRequest, id: `"proxy:1"`, idKey: "proxy:1", reserved: true},
		{name: "seed authenticate answer", in: `{"jsonrpc":"2.0","id":"proxy:1","result":{"name":"Chrome 141","accessToken":"eyJhbGci..."}}`, kind: KindResponse, id: `"proxy:1"`, idKey: "proxy:1", reserved: true},
		{name: "seed authenticated notification", in: `{"jsonrpc":"2.0","method":"authenticated","params":{"user_id":"u","extension_id":"ext-1"}}`, kind: KindNotification},
		{name: "seed handshake", in: `{"jsonrpc":"2.0","id":1,"method":"mcp_handshake","params":{"accessToken":"eyJ"}}`, kind: KindRequest, id: `1`, idKey: "1"},
		{name: "seed createTab with connectionId", in: `{"jsonrpc":"2.0","id":100,"method":"createTab","params":{"url":"https://example.com","stealth":true},"connectionId":"conn-70df"}`, kind: KindRequest, id: `100`, idKey: "100"},
		{name: "seed mapped id", in: `{"jsonrpc":"2.0","id":"conn-abc:1","result":{}}`, kind: KindResponse, id: `"conn-abc:1"`, idKey: "conn-abc:1"},
		{name: "seed error answer", in: `{"jsonrpc":"2.0","id":100,"error":{"code":-32000,"message":"Tab creation failed: Permission denied"}}`, kind: KindResponse, id: `100`, idKey: "100"},
		{name: "seed status notification", in: `{"jsonrpc":"2.0","method":"status","params":{"connected":true,"peer_count":2,"timestamp":"2025-10-20T21:43:53.163+0200"}}`, kind: KindNotification},
		{name: "uuid id", in: `{"jsonrpc":"2.0","id":"550e8400-e29b-41d4-a716-446655440000","method":"getTabs"}`, kind: KindRequest, id: `"550e8400-e29b-41d4-a716-446655440000"`, idKey: "550e8400-e29b-41d4-a716-446655440000"},
		{name: "params array", in: `{"jsonrpc":"2.0","id":2,"method":"m","params":[1,2]}`, kind: KindRequest, id: `2`, idKey: "2"},
		{name: "params null is absent", in: `{"jsonrpc":"2.0","id":2,"method":"m","params":null}`, kind: KindRequest, id: `2`, idKey: "2"},
		{name: "unknown members dropped", in: `{"jsonrpc":"2.0","id":3,"method":"m","extra":{"a":1}}`, kind: KindRequest, id: `3`, idKey: "3"},
		{name: "escaped reserved prefix", in: `{"jsonrpc":"2.0","id":"\u0070roxy:9","method":"m"}`, kind: KindRequest, id: `"\u0070roxy:9"`, idKey: "proxy:9", reserved: true},
		{name: "ext prefix", in: `{"jsonrpc":"2.0","id":"ext:1","method":"m"}`, kind: KindRequest, id: `"ext:1"`, idKey: "ext:1", reserved: true},
		{name: "result null is a result", in: `{"jsonrpc":"2.0","id":5,"result":null}`, kind: KindResponse, id: `5`, idKey: "5"},

		{name: "not JSON", in: `{"jsonrpc":`, code: CodeParseError},
		{name: "empty", in: ``, code: CodeParseError},
		{name: "batch", in: `[{"jsonrpc":"2.0","id":1,"method":"m"}]`, code: CodeInvalidRequest},
		{name: "not an object", in: `"hello"`, code: CodeInvalidRequest},
		{name: "no jsonrpc", in: `{"id":1,"method":"m"}`, code: CodeInvalidRequest, id: `1`, idKey: "1"},
		{name: "jsonrpc 1.0", in: `{"jsonrpc":"1.0","id":1,"method":"m"}`, code: CodeInvalidRequest, id: `1`, idKey: "1"},
		{name: "method not a string", in: `{"jsonrpc":"2.0","id":1,"method":7}`, code: CodeInvalidRequest, id: `1`, idKey: "1"},
		{name: "empty method", in: `{"jsonrpc":"2.0","id":1,"method":""}`, code: CodeInvalidRequest, id: `1`, idKey: "1"},
		{name: "long method", in: `{"jsonrpc":"2.0","id":1,"method":"` + strings.Repeat("m", 200) + `"}`, code: CodeInvalidRequest, id: `1`, idKey: "1"},
		{name: "params scalar", in: `{"jsonrpc":"2.0","id":1,"method":"m","params":3}`, code: CodeInvalidRequest, id: `1`, idKey: "1"},
		{name: "null id on a request", in: `{"jsonrpc":"2.0","id":null,"method":"m"}`, code: CodeInvalidRequest},
		{name: "null id on a result", in: `{"jsonrpc":"2.0","id":null,"result":{}}`, code: CodeInvalidRequest},
		{name: "null id on an error", in: `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`, kind: KindResponse, id: `null`},
		{name: "object id", in: `{"jsonrpc":"2.0","id":{},"method":"m"}`, code: CodeInvalidRequest},
		{name: "long id", in: `{"jsonrpc":"2.0","id":"` + strings.Repeat("i", 300) + `","method":"m"}`, code: CodeInvalidRequest},
		{name: "duplicate id", in: `{"jsonrpc":"2.0","id":1,"id":"proxy:1","method":"m"}`, code: CodeInvalidRequest},
		{name: "request with result", in: `{"jsonrpc":"2.0","id":1,"method":"m","result":{}}`, code: CodeInvalidRequest, id: `1`, idKey: "1"},
		{name: "response without result or error", in: `{"jsonrpc":"2.0","id":1}`, code: CodeInvalidRequest, id: `1`, idKey: "1"},
		{name: "response with both", in: `{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}`, code: CodeInvalidRequest, id: `1`, idKey: "1"},
		{name: "error without code", in: `{"jsonrpc":"2.0","id":1,"error":{"message":"x"}}`, code: CodeInvalidRequest, id: `1`, idKey: "1"},
		{name: "error code not integer", in: `{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"x"}}`, code: CodeInvalidRequest, id: `1`, idKey: "1"},
		{name: "no method no id", in: `{"jsonrpc":"2.0","result":{}}`, code: CodeInvalidRequest},
		{name: "connectionId not a string", in: `{"jsonrpc":"2.0","id":1,"method":"m","connectionId":5}`, code: CodeInvalidRequest, id: `1`, idKey: "1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := ParseMessage([]byte(tt.in))
			if tt.code != 0 {
				if err == nil {
					t.Fatalf("no error, want code %d", tt.code)
				}
				if err.Code != tt.code {
					t.Fatalf("code %d (%s), want %d", err.Code, err.Message, tt.code)
				}
			} else {
				if err != nil {
					t.Fatalf("error %v", err)
				}
				if m.Kind() != tt.kind {
					t.Fatalf("kind %d, want %d", m.Kind(), tt.kind)
				}
			}
			if string(m.ID) != tt.id {
				t.Errorf("id %s, want %s", m.ID, tt.id)
			}
			if m.IDKey() != tt.idKey {
				t.Errorf("id key %q, want %q", m.IDKey(), tt.idKey)
			}
			if m.Reserved() != tt.reserved {
				t.Errorf("reserved %v, want %v", m.Reserved(), tt.reserved)
			}
		})
	}
}

func TestParseKeepsTheSeedFields(t *testing.T) {
	m, err := ParseMessage([]byte(`{"jsonrpc":"2.0","id":100,"method":"createTab","params":{"url":"https://example.com","stealth":true},"connectionId":"conn-70df"}`))
	if err != nil {
		t.Fatal(err)
	}
	if m.Method != "createTab" || m.ConnectionID != "conn-70df" || string(m.Params) != `{"url":"https://example.com","stealth":true}` {
		t.Fatalf("parsed %+v", m)
	}
	e, perr := ParseMessage([]byte(`{"jsonrpc":"2.0","id":100,"error":{"code":-32000,"message":"Tab creation failed: Permission denied","data":{"x":1}}}`))
	if perr != nil {
		t.Fatal(perr)
	}
	if e.Error.Code != -32000 || e.Error.Message != "Tab creation failed: Permission denied" || string(e.Error.Data) != `{"x":1}` {
		t.Fatalf("error %+v", e.Error)
	}
}

func TestEncode(t *testing.T) {
	tests := []struct {
		name string
		got  []byte
		want string
	}{
		{"request", EncodeRequest(stringID("proxy:1"), MethodAuthenticate, nil), `{"jsonrpc":"2.0","id":"proxy:1","method":"authenticate","params":{}}`},
		{"notification", encodeNotification(MethodDisconnected, DisconnectedParams{ConnectionID: "conn-1", Reason: "Extension closed"}), `{"jsonrpc":"2.0","method":"disconnected","params":{"connection_id":"conn-1","reason":"Extension closed"}}`},
		{"empty result is {}", EncodeResult(json.RawMessage(`4`), nil), `{"jsonrpc":"2.0","id":4,"result":{}}`},
		{"error with null id", EncodeError(nil, Errorf(CodeParseError, "Parse error")), `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`},
		{"raw result keeps the id's type", rawResult(json.RawMessage(`"550e"`), json.RawMessage(`{"tabId":42}`)), `{"jsonrpc":"2.0","id":"550e","result":{"tabId":42}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if string(tt.got) != tt.want {
				t.Fatalf("got  %s\nwant %s", tt.got, tt.want)
			}
			if _, err := ParseMessage(tt.got); err != nil {
				t.Fatalf("the encoded message does not parse: %v", err)
			}
		})
	}
}

func TestMapID(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"m"}`, "conn-abc:1"},
		{`{"jsonrpc":"2.0","id":"550e8400-e29b","method":"m"}`, "conn-abc:550e8400-e29b"},
		{`{"jsonrpc":"2.0","id":"a:b","method":"m"}`, "conn-abc:a:b"},
		{`{"jsonrpc":"2.0","id":-2.5e3,"method":"m"}`, "conn-abc:-2.5e3"},
	}
	for _, tt := range tests {
		m, err := ParseMessage([]byte(tt.in))
		if err != nil {
			t.Fatal(err)
		}
		got := MapID("conn-abc", m)
		if got != tt.want {
			t.Errorf("MapID(%s) = %q, want %q", tt.in, got, tt.want)
		}
		conn, orig, ok := SplitID(got)
		if !ok || conn != "conn-abc" || orig != m.IDKey() {
			t.Errorf("SplitID(%q) = %q, %q, %v", got, conn, orig, ok)
		}
	}
	if _, _, ok := SplitID("7"); ok {
		t.Error("a direct-mode id split")
	}
}

func TestCheckURL(t *testing.T) {
	tests := []struct {
		url      string
		insecure bool
		ok       bool
	}{
		{"wss://relay.example.com/extension", false, true},
		{"ws://127.0.0.1:8765/extension", false, true},
		{"ws://localhost:8765/mcp", false, true},
		{"ws://[::1]:8765/mcp", false, true},
		{"ws://relay.example.com/mcp", false, false},
		{"ws://10.0.0.2:8765/mcp", false, false},
		{"ws://10.0.0.2:8765/mcp", true, true},
		{"http://127.0.0.1/mcp", false, false},
		{"wss:///mcp", false, false},
		{"::", false, false},
	}
	for _, tt := range tests {
		_, err := CheckURL(tt.url, tt.insecure)
		if (err == nil) != tt.ok {
			t.Errorf("CheckURL(%q, %v) = %v, want ok=%v", tt.url, tt.insecure, err, tt.ok)
		}
	}
}

func TestTokens(t *testing.T) {
	auth := testAuth(t)
	other, err := NewHS256([]byte(strings.Repeat("x", 40)))
	if err != nil {
		t.Fatal(err)
	}
	good, _ := auth.Issue("alice", time.Hour)
	forged, _ := other.Issue("alice", time.Hour)
	expired := sign(t, []byte(testSecret), jwt.SigningMethodHS256, jwt.MapClaims{"sub": "alice", "exp": time.Now().Add(-time.Minute).Unix()})
	noExp := sign(t, []byte(testSecret), jwt.SigningMethodHS256, jwt.MapClaims{"sub": "alice"})
	noSub := sign(t, []byte(testSecret), jwt.SigningMethodHS256, jwt.MapClaims{"exp": time.Now().Add(time.Hour).Unix()})
	hs512 := sign(t, []byte(testSecret), jwt.SigningMethodHS512, jwt.MapClaims{"sub": "alice", "exp": time.Now().Add(time.Hour).Unix()})
	none := sign(t, jwt.UnsafeAllowNoneSignatureType, jwt.SigningMethodNone, jwt.MapClaims{"sub": "alice", "exp": time.Now().Add(time.Hour).Unix()})
	tests := []struct {
		name, token, user, why string
		is                     error
	}{
		{name: "good", token: good, user: "alice"},
		{name: "forged", token: forged, why: "signature", is: jwt.ErrTokenSignatureInvalid},
		{name: "expired", token: expired, why: "expired", is: jwt.ErrTokenExpired},
		{name: "no exp", token: noExp, why: "exp", is: jwt.ErrTokenRequiredClaimMissing},
		{name: "no sub", token: noSub, why: "sub"},
		{name: "other algorithm", token: hs512, why: "HS256"},
		{name: "alg none", token: none, why: "HS256"},
		{name: "not a JWT", token: "hello", why: "not a JWT", is: jwt.ErrTokenMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, err := auth.Authenticate(tt.token)
			if tt.user != "" {
				if err != nil || id.User != tt.user || id.Expires.IsZero() {
					t.Fatalf("Authenticate = %+v, %v", id, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted as %q", id.User)
			}
			if !strings.Contains(err.Error(), tt.why) {
				t.Errorf("error %q does not say %q", err, tt.why)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v is not %v", err, tt.is)
			}
			if strings.Contains(err.Error(), tt.token) {
				t.Error("the error repeats the token")
			}
		})
	}
	if _, err := NewHS256([]byte("short")); err == nil {
		t.Error("a 5-byte secret was accepted")
	}
}

func sign(t *testing.T, key any, m jwt.SigningMethod, c jwt.MapClaims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(m, c).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
