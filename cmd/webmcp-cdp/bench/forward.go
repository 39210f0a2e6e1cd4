package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
)

// What both forwarders (Forward, ForwardHTTP) answer: a tools/call's
// fixed result, and the serverInfo member of an initialize result.
const (
	forwardCallResult = `{"content":[{"type":"text","text":"x"}]}`
	forwardServerInfo = `"serverInfo":{"name":"webmcp-cdp-bench-forwarder","version":"1"}`
)

// Forward is the floor of one process between an MCP client and the
// browser: it launches a browser of its own on page, as raw CDP does, and
// answers every tools/call request line of in with a fixed text result
// after exactly one Runtime.callFunctionOn into the page. It answers
// server/discover (so a go-sdk client speaks 2026-07-28 to it, as to the
// server) and initialize at once, and any other request with "method not
// found". It reads no more of a line than its id and method, validates
// nothing and routes nothing, so what a tools/call over stdio costs above
// it is what the server does. `webmcp-cdp bench` starts it as a subprocess
// (the hidden flag --forward-page) and measures it like the server, with
// the minimal client and with the go-sdk client.
func Forward(ctx context.Context, page string, in io.Reader, out io.Writer) error {
	rb, err := newRawBrowser(ctx, page)
	if err != nil {
		return err
	}
	defer rb.close()
	var mu sync.Mutex // guards writes to out
	answer := func(id int64, result string, callErr error) error {
		line := make([]byte, 0, 64+len(result))
		line = append(line, `{"jsonrpc":"2.0","id":`...)
		line = strconv.AppendInt(line, id, 10)
		if callErr != nil {
			line = append(line, `,"error":{"code":-32603,"message":`...)
			line = strconv.AppendQuote(line, callErr.Error())
			line = append(line, "}}\n"...)
		} else {
			line = append(line, `,"result":`...)
			line = append(line, result...)
			line = append(line, "}\n"...)
		}
		mu.Lock()
		defer mu.Unlock()
		_, err := out.Write(line)
		return err
	}
	r := bufio.NewReaderSize(in, 4096)
	callResult := forwardCallResult
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			if err == io.EOF {
				return nil
			}
			return fmt.Errorf("the forwarder's input: %w", err)
		}
		id, ok := lineID(line)
		if !ok {
			continue // a notification
		}
		var result string
		switch {
		case bytes.Contains(line, []byte(`"method":"tools/call"`)):
			res := callResult
			wg.Add(1)
			go func() {
				defer wg.Done()
				answer(id, res, rb.call(ctx))
			}()
			continue
		case bytes.Contains(line, []byte(`"method":"server/discover"`)):
			result = `{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}`
			callResult = forwardCallResult[:len(forwardCallResult)-1] + `,"resultType":"complete"}`
		case bytes.Contains(line, []byte(`"method":"initialize"`)):
			result = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},` + forwardServerInfo + `}`
		default:
			if err := answer(id, "", errors.New("method not found: the forwarder answers tools/call, server/discover and initialize")); err != nil {
				return err
			}
			continue
		}
		if err := answer(id, result, nil); err != nil {
			return err
		}
	}
}
