package cdp

import (
	"strings"
	"testing"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/page"
)

// TestMarks: a Browser writes the Marks it is given into the page script
// (so a reconnection to the same browser can reach the documents the last
// connection instrumented), makes fresh ones when given none, and refuses
// marks the script cannot carry safely.
func TestMarks(t *testing.T) {
	given := Marks{Nonce: "0123456789abcdef", Binding: "__webmcpCdp_abc123"}
	tests := []struct {
		name    string
		marks   Marks
		wantErr bool
	}{
		{name: "given", marks: given},
		{name: "fresh", marks: Marks{}},
		{name: "nonce with a quote", marks: Marks{Nonce: "ab'c", Binding: "b"}, wantErr: true},
		{name: "binding with a space", marks: Marks{Nonce: "abc", Binding: "a b"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := NewBrowser(nil, Options{Marks: tt.marks, Logger: discardLogger()})
			if tt.wantErr {
				if err == nil {
					t.Fatalf("NewBrowser took marks %+v", tt.marks)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := tt.marks
			if want == (Marks{}) {
				if b.nonce == "" || b.binding == "" || b.nonce == given.Nonce {
					t.Fatalf("fresh marks: nonce %q binding %q", b.nonce, b.binding)
				}
				if other := NewMarks(); other.Nonce == b.nonce || other.Binding == b.binding {
					t.Fatalf("two fresh Marks are the same: %+v", other)
				}
				want = Marks{Nonce: b.nonce, Binding: b.binding}
			}
			if b.nonce != want.Nonce || b.binding != want.Binding {
				t.Errorf("browser has nonce %q binding %q, want %+v", b.nonce, b.binding, want)
			}
			// The script goes to every target as params rendered once.
			var params page.AddScriptToEvaluateOnNewDocumentParams
			if err := jsonv2.Unmarshal(b.scriptParams, &params); err != nil {
				t.Fatalf("the rendered params of the page script: %v", err)
			}
			if params.RunImmediately == nil || !*params.RunImmediately {
				t.Errorf("the page script is not set to run in the current document too")
			}
			if !strings.Contains(params.Source, "'"+want.Nonce+"'") || !strings.Contains(params.Source, "'"+want.Binding+"'") {
				t.Errorf("the page script does not carry the marks %+v", want)
			}
		})
	}
}
