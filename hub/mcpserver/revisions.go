package mcpserver

import (
	"bytes"
	"io"
	"net/http"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file routes each request on /mcp to the handler of its MCP
// revision (decision 2026-11-28-two-revisions-one-endpoint):
//   - a request of 2026-07-28 or later (by its MCP-Protocol-Version header,
//     or, without the header, by the protocol version in its _meta) goes to
//     the stateless handler: no session, the version and the client's
//     capabilities in every request, GET and DELETE refused with 405;
//   - any other request goes to the stateful handler of the older
//     revisions, as before: initialize, Mcp-Session-Id, the GET stream,
//     server-to-client requests;
//   - a GET or DELETE without Mcp-Session-Id names no session of an older
//     revision and has no meaning in the new one: 405, Allow: POST.
//
// A new-revision request that carries an Mcp-Session-Id (a client that
// upgraded in the middle of a session) is served statelessly: the
// revision has no sessions, and the header is ignored as the go-sdk's
// stateless handler ignores it.

// headerProtocolVersion is the header every POST of a client past
// initialization carries (2025-06-18 on).
const headerProtocolVersion = "MCP-Protocol-Version"

// headerSessionID is the session header of the stateful revisions.
const headerSessionID = "Mcp-Session-Id"

// revisionRouter returns the handler of both revisions on one endpoint.
// maxBody bounds the body it reads to find a request's revision.
func revisionRouter(stateful, stateless http.Handler, maxBody int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := r.Header.Get(headerProtocolVersion)
		switch {
		case v >= protocol20260728:
			stateless.ServeHTTP(w, r)
		case r.Method == http.MethodPost && v == "" && r.Header.Get(headerSessionID) == "" && newRevisionBody(w, r, maxBody):
			stateless.ServeHTTP(w, r)
		case r.Method != http.MethodPost && r.Header.Get(headerSessionID) == "":
			w.Header().Set("Allow", "POST")
			http.Error(w, "Method Not Allowed: without an Mcp-Session-Id there is no event stream or session here; "+
				"send requests with POST (MCP 2026-07-28 has no sessions; older clients get a session from initialize)", http.StatusMethodNotAllowed)
		default:
			stateful.ServeHTTP(w, r)
		}
	})
}

// newRevisionBody reads r's body (leaving it in place for the handler) and
// says whether its message carries a protocol version of 2026-07-28 or
// later in params._meta. A body that cannot be read or parsed is left to
// the stateful handler, whose error the older clients know.
func newRevisionBody(w http.ResponseWriter, r *http.Request, maxBody int64) bool {
	body, err := peekBody(w, r, maxBody)
	return err == nil && metaVersion(body) >= protocol20260728
}

// peekBody reads r's body, at most maxBody bytes, and puts it back for the
// handlers after it. A body that an earlier peek put back and nobody has
// read since is returned as it is, not copied again (the edge peeks up to
// three times: the revision router, the fast path, the parameter headers).
func peekBody(w http.ResponseWriter, r *http.Request, maxBody int64) ([]byte, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	if p, ok := r.Body.(*peekedBody); ok && p.unread() {
		return p.body, p.err
	}
	orig := r.Body
	body, err := io.ReadAll(http.MaxBytesReader(w, orig, maxBody))
	p := &peekedBody{rd: bytes.NewReader(body), body: body, err: err, Closer: orig}
	p.Reader = p.rd
	if err != nil {
		p.Reader = io.MultiReader(p.rd, errReader{err})
	}
	// Closing is left to the handler, on the original body, so that the
	// server treats a failed body as before (it ends the connection).
	r.Body = p
	return body, err
}

// peekedBody is a request body that peekBody read and put back: the bytes
// read, then the error that ended the read, if any.
type peekedBody struct {
	io.Reader
	io.Closer
	rd   *bytes.Reader
	body []byte
	err  error
}

// unread reports whether nothing has been read from p since it was put
// back.
func (p *peekedBody) unread() bool { return p.rd.Len() == len(p.body) }

// metaVersion returns params._meta's protocol version of a JSON-RPC
// message, or "" when it has none or is not such a message.
func metaVersion(body []byte) string {
	var msg struct {
		Params struct {
			Meta map[string]jsontext.Value `json:"_meta"`
		} `json:"params"`
	}
	if jsonv2.Unmarshal(body, &msg, jsonv2.RejectUnknownMembers(false)) != nil {
		return ""
	}
	var v string
	if raw, ok := msg.Params.Meta[mcp.MetaKeyProtocolVersion]; !ok || jsonv2.Unmarshal(raw, &v) != nil {
		return ""
	}
	return v
}

// errReader returns its error.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
