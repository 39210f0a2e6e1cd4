package mcpserver

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// pageOf makes a page of n tools whose JSON is size bytes each.
func pageOf(n, size int) toolsPage {
	p := make(toolsPage, n)
	for i := range p {
		name := fmt.Sprintf("t%05d", i)
		pad := max(size-len(`{"name":"","x":""}`)-len(name), 0)
		p[i] = ToolEntry{Name: name, JSON: []byte(`{"name":"` + name + `","x":"` + strings.Repeat("a", pad) + `"}`)}
	}
	return p
}

// TestToolsPageWrites checks that a page written through pageWriter, in
// chunks, is byte for byte the page appended in one buffer, and that size
// says how long it is.
func TestToolsPageWrites(t *testing.T) {
	tests := []struct {
		name      string
		page      toolsPage
		minWrites int
	}{
		{"empty page", nil, 1},
		{"one tool", pageOf(1, 200), 1},
		{"many small tools", pageOf(1000, 100), 2},
		{"a tool larger than the buffer", pageOf(3, 3*writeChunk/2), 3},
	}
	var pw pageWriter
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before, after := []byte(`{"tools":[`), []byte("]}\n")
			want := append(tc.page.appendTo(append([]byte(nil), before...)), after...)
			if got := len(before) + tc.page.size() + len(after); got != len(want) {
				t.Errorf("size says %d bytes, the page has %d", got-len(before)-len(after), len(want)-len(before)-len(after))
			}
			for range 2 { // the second time with a reused buffer
				w := &countingWriter{}
				if err := pw.write(w, before, tc.page, after); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(w.buf.Bytes(), want) {
					t.Fatalf("wrote %d bytes that differ from the %d appended", w.buf.Len(), len(want))
				}
				if w.writes < tc.minWrites || w.max > max(writeChunk, 3*writeChunk/2) {
					t.Errorf("%d writes of at most %d bytes", w.writes, w.max)
				}
			}
		})
	}
}

// TestToolsPageWriteError checks that a failed write is reported.
func TestToolsPageWriteError(t *testing.T) {
	var pw pageWriter
	err := pw.write(failingWriter{}, []byte("x"), pageOf(10, 100), []byte("y"))
	if !errors.Is(err, errBroken) {
		t.Fatalf("err = %v, want %v", err, errBroken)
	}
}

type countingWriter struct {
	buf         bytes.Buffer
	writes, max int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	w.max = max(w.max, len(p))
	return w.buf.Write(p)
}

var errBroken = errors.New("broken pipe")

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errBroken }
