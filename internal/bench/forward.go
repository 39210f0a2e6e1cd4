package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strconv"
	"sync"
)

// Forward is the floor of one process between an MCP client and the
// browser: it launches a browser of its own on page, as raw CDP does, and
// answers every JSON-RPC request line of in with an empty result after
// exactly one Runtime.callFunctionOn into the page (none for the
// initialize request, which it answers at once). It reads no method,
// validates nothing and routes nothing, so what a tools/call over stdio
// costs above it is what the server does. `webmcp-cdp bench` starts it as
// a subprocess (the hidden flag --forward-page) and measures it like the
// server, with the minimal client.
func Forward(ctx context.Context, page string, in io.Reader, out io.Writer) error {
	rb, err := newRawBrowser(ctx, page)
	if err != nil {
		return err
	}
	defer rb.close()
	var mu sync.Mutex // guards writes to out
	answer := func(id int64, callErr error) error {
		line := make([]byte, 0, 64)
		line = append(line, `{"jsonrpc":"2.0","id":`...)
		line = strconv.AppendInt(line, id, 10)
		if callErr != nil {
			line = append(line, `,"error":{"code":-32603,"message":`...)
			line = strconv.AppendQuote(line, callErr.Error())
			line = append(line, "}}\n"...)
		} else {
			line = append(line, `,"result":{}}`+"\n"...)
		}
		mu.Lock()
		defer mu.Unlock()
		_, err := out.Write(line)
		return err
	}
	r := bufio.NewReaderSize(in, 4096)
	first := true
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
		if first { // initialize
			first = false
			if err := answer(id, nil); err != nil {
				return err
			}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			answer(id, rb.call(ctx))
		}()
	}
}
