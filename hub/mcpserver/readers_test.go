package mcpserver

import (
	"runtime"
	"strconv"
	"testing"
)

// TestSpareReadersBounded: sequential fast calls reuse the readers that
// ran earlier calls: at most maxSpareReaders wait, however many calls ran.
// (A spare also waits on the connection's closed channel, so Close ends
// them.)
func TestSpareReadersBounded(t *testing.T) {
	s := fastServer(t, Options{})
	p := newPipeSession(t, s, true)
	p.send(legacyInit)
	p.next()
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	call := func(i int) {
		p.send(`{"jsonrpc":"2.0","id":` + strconv.Itoa(i) + `,"method":"tools/call","params":{"name":"s_test_text"}}`)
		p.next()
	}
	call(1)
	before := runtime.NumGoroutine()
	for i := 2; i < 200; i++ {
		call(i)
	}
	if grew := runtime.NumGoroutine() - before; grew > maxSpareReaders {
		t.Errorf("after 200 sequential calls there are %d more goroutines than after the first, want at most %d spare readers", grew, maxSpareReaders)
	}
	if p.sdkCalls() != 0 {
		t.Fatalf("%d calls reached the SDK, want 0 (the test is about the fast path)", p.sdkCalls())
	}
}
