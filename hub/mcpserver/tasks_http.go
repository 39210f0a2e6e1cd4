package mcpserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// taskHeaderCheck wraps the stateless handler: a tasks/get, tasks/update
// or tasks/cancel whose Mcp-Name header is not its params.taskId is
// refused (400, -32020), as SEP-2663 extends the routing headers of
// SEP-2243 to them (the SDK checks Mcp-Name only for the methods it
// knows). A request without the header goes on: the task id is in its
// body. maxBody bounds the body it reads.
func taskHeaderCheck(next http.Handler, maxBody int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimSpace(r.Header.Get(headerName))
		switch r.Header.Get(headerMethod) {
		case methodTasksGet, methodTasksUpdate, methodTasksCancel:
		default:
			next.ServeHTTP(w, r)
			return
		}
		if r.Method != http.MethodPost || name == "" {
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
				TaskID string `json:"taskId"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &msg) != nil || msg.Params.TaskID == name {
			next.ServeHTTP(w, r)
			return
		}
		writeRPCError(w, http.StatusBadRequest, msg.ID, mcp.CodeHeaderMismatch,
			fmt.Sprintf("header mismatch: Mcp-Name is %q but params.taskId is %q (send the task's id in both)", truncate(name), truncate(msg.Params.TaskID)))
	})
}
