package mcpserver

import (
	"context"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file makes a round of a page server's questions (pagerelay.go
// relays them) one input-required result of the client's request, and
// hands the client's answers back to the questions.

// questionsArrived takes a page's question, and the others it asks at the
// same time, and makes them one input-required result, unless the client
// lacks a capability one needs: then the request ends with -32021.
//
// The questions of one round are those the page sent together with the
// first. A page sends them in one go (the TypeScript SDK's legacy shim
// posts a round's requests in one task), but they reach the hub through
// the browser's takes of the page's queue, which may come a CDP round trip
// apart, longer on a loaded machine than any fixed wait. So the round ends
// when both hold: no question came for h.gather, and the page's answer to
// a ping sent after the first question has been read. The page posts
// that answer after the questions it had already sent (window messages
// are delivered in the order they were posted, and the hub reads the
// page's messages in order), and each question is in pc.questions once
// read (offer): the round is then complete.
func (h *hitl) questionsArrived(ctx context.Context, pc *pendingCall, first *pageQuestion) (outcome, error) {
	batch := []*pageQuestion{first}
	timer := time.NewTimer(h.gather)
	defer timer.Stop()
	synced := syncPage(ctx, first)
	quiet := false
gather:
	for len(batch) < maxPageQuestions {
		if quiet && synced == nil {
			// Take what was read before the page's answer, then end.
			select {
			case q := <-pc.questions:
				batch = append(batch, q)
				continue
			default:
				break gather
			}
		}
		select {
		case q := <-pc.questions:
			batch = append(batch, q)
			timer.Reset(h.gather)
			quiet = false
		case <-synced:
			synced = nil
		case <-timer.C:
			quiet = true
		case <-ctx.Done():
			refuseQuestions(batch, "the client went away")
			pc.cancel()
			h.remove(pc.id)
			return outcome{}, ctx.Err()
		}
	}
	pc.mu.Lock()
	caps := pc.caps
	pc.mu.Unlock()
	for _, q := range batch {
		if missing := missingCapability(caps, q.req); missing != "" {
			refuseQuestions(batch, fmt.Sprintf("the client did not declare the %s capability", missing))
			pc.cancel()
			h.remove(pc.id)
			return outcome{err: &jsonrpc.Error{
				Code:    mcp.CodeMissingRequiredClientCapabilities,
				Message: fmt.Sprintf("%s: the page server asked the client for %s, which needs the %s capability this client did not declare", pc.name, methodOf(q.req), missing),
				Data:    mustJSON(map[string]any{"requiredCapabilities": map[string]any{missing: map[string]any{}}}),
			}}, nil
		}
	}
	return h.askQuestions(pc, batch), nil
}

// syncPage pings the page session q came from, and returns a channel
// closed once the answer is read (or the ping failed, or took longer than
// maxQuestionSync); nil when there is no session to ping.
func syncPage(ctx context.Context, q *pageQuestion) <-chan struct{} {
	if q.sync == nil {
		return nil
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		ctx, cancel := context.WithTimeout(ctx, maxQuestionSync)
		defer cancel()
		q.sync(ctx)
	}()
	return done
}

// refuseQuestions answers the page's questions with an error.
func refuseQuestions(batch []*pageQuestion, why string) {
	for _, q := range batch {
		q.answer <- questionAnswer{err: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: why}}
	}
}

// askQuestions makes batch the questions pc's client is asked now.
func (h *hitl) askQuestions(pc *pendingCall, batch []*pageQuestion) outcome {
	asks := make(mcp.InputRequestMap, len(batch))
	for _, q := range batch {
		for _, taken := asks[q.key]; taken; _, taken = asks[q.key] {
			q.key += "+"
		}
		asks[q.key] = q.req
	}
	pc.mu.Lock()
	pc.asked = batch
	pc.mu.Unlock()
	h.add(pc)
	return outcome{asks: asks, state: h.stateOf(pc)}
}

// answerQuestions gives the page the client's answers, and returns the
// questions left without one.
func answerQuestions(asked []*pageQuestion, answers mcp.InputResponseMap) (left []*pageQuestion) {
	for _, q := range asked {
		r, ok := answers[q.key]
		if !ok || r == nil {
			left = append(left, q)
			continue
		}
		q.answer <- encodeAnswer(r)
	}
	return left
}
