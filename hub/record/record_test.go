package record_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/webmcp-cdp/webmcp-cdp/hub"
	"github.com/webmcp-cdp/webmcp-cdp/hub/ci"
	"github.com/webmcp-cdp/webmcp-cdp/hub/record"
	"github.com/webmcp-cdp/webmcp-cdp/internal/core"
)

const page = "http://127.0.0.1:8080/shop/index.html?x=1"

// call is a finished call as the hub reports it.
func call(tab int, url, tool, args, schema, result string, isError bool) hub.CallDetail {
	d := hub.CallDetail{Page: tool, URL: url, Args: json.RawMessage(args), Result: core.Text(result)}
	d.Tab = tab
	d.Result.IsError = isError
	if schema != "" {
		d.Schema = json.RawMessage(schema)
	}
	return d
}

// event is one thing told to a Recorder.
type event func(r *record.Recorder)

func calls(ds ...hub.CallDetail) []event {
	var out []event
	for _, d := range ds {
		out = append(out, func(r *record.Recorder) { r.Call(d) })
	}
	return out
}

// TestRecorder: what each session writes, read back as a spec.
func TestRecorder(t *testing.T) {
	pwSchema := `{"type":"object","properties":{"user":{"type":"string"},"pw":{"type":"string","format":"password"}}}`
	tests := []struct {
		name   string
		opts   record.Options
		events []event
		check  func(t *testing.T, s *ci.Spec, file, log string)
	}{
		{
			name:   "a JSON result is a structured snapshot, a text one its text",
			events: calls(call(1, page, "search", `{"q":"lamp","n":3}`, "", `{"total":2,"ids":[12345678901,2]}`, false), call(1, page, "hello", "", "", "hi\nthere", false)),
			check: func(t *testing.T, s *ci.Spec, file, _ string) {
				if s.Base != "http://127.0.0.1:8080/" || len(s.Pages) != 1 || s.Pages[0].URL != "shop/index.html?x=1" {
					t.Errorf("base %q, pages %+v", s.Base, s.Pages)
				}
				c := s.Pages[0].Calls
				if len(c) != 2 || c[0].Name != "step 1: search" || string(c[0].Args) != `{"n":3,"q":"lamp"}` || string(c[0].Expect.Snapshot) != `{"ids":[12345678901,2],"total":2}` {
					t.Errorf("step 1: %+v", c[0])
				}
				if string(c[1].Expect.Snapshot) != `"hi\nthere"` || c[1].Args != nil {
					t.Errorf("step 2: snapshot %s, args %s", c[1].Expect.Snapshot, c[1].Args)
				}
			},
		},
		{
			name: "format password and secret-looking names become placeholders, also in results",
			events: calls(
				call(1, page, "login", `{"user":"ann","pw":"s3cret-pw"}`, pwSchema, "hello ann, your pw is s3cret-pw", false),
				call(1, page, "connect", `{"api_key":"k-123456","opts":{"token":"t-999999","n":1}}`, "", `{"ok":true}`, false),
				call(1, page, "login", `{"user":"bob","pw":"other-pw"}`, pwSchema, "hello bob", false),
			),
			check: func(t *testing.T, s *ci.Spec, file, _ string) {
				for _, secret := range []string{"s3cret-pw", "k-123456", "t-999999", "other-pw"} {
					if strings.Contains(file, secret) {
						t.Errorf("%q is in the file:\n%s", secret, file)
					}
				}
				if strings.Join(s.Secrets, ",") != "PW,API_KEY,TOKEN,PW_2" {
					t.Errorf("secrets %v", s.Secrets)
				}
				c := s.Pages[0].Calls
				if string(c[0].Args) != `{"pw":"${PW}","user":"ann"}` || string(c[0].Expect.Snapshot) != `"hello ann, your pw is ${PW}"` {
					t.Errorf("step 1: %s %s", c[0].Args, c[0].Expect.Snapshot)
				}
				if string(c[1].Args) != `{"api_key":"${API_KEY}","opts":{"n":1,"token":"${TOKEN}"}}` {
					t.Errorf("step 2: %s", c[1].Args)
				}
				if string(c[2].Args) != `{"pw":"${PW_2}","user":"bob"}` {
					t.Errorf("step 3: %s", c[2].Args)
				}
			},
		},
		{
			name: "a reload, a close, another tab and another URL start new pages",
			events: append(append(calls(
				call(1, page, "a", `{}`, "", "1", false),
				call(1, page, "b", `{}`, "", "2", false)),
				func(r *record.Recorder) { r.TabReloaded(1) }),
				append(calls(
					call(1, page, "a", `{}`, "", "3", false),
					call(2, "https://other.example/x", "c", `{}`, "", "4", false),
					call(2, "https://other.example/y", "c", `{}`, "", "5", false)),
					func(r *record.Recorder) { r.TabClosed(2) },
					func(r *record.Recorder) { r.TabOpened(3, page) },
					func(r *record.Recorder) { r.Call(call(3, page, "a", `{}`, "", "6", false)) })...),
			check: func(t *testing.T, s *ci.Spec, _, _ string) {
				var got []string
				for _, p := range s.Pages {
					got = append(got, p.URL+"="+string(rune('0'+len(p.Calls))))
				}
				want := "shop/index.html?x=1=2 shop/index.html?x=1=1 https://other.example/x=1 https://other.example/y=1 shop/index.html?x=1=1"
				if strings.Join(got, " ") != want {
					t.Errorf("pages %v, want %s", got, want)
				}
				if !strings.Contains(s.Pages[1].Name, "again") {
					t.Errorf("the reloaded page's name %q", s.Pages[1].Name)
				}
			},
		},
		{
			name:   "URLs: the root, a query, another origin, a page without one",
			events: calls(call(1, "http://h:1/", "a", "", "", "1", false), call(2, "http://h:1/?q=1", "a", "", "", "1", false), call(3, "https://o.test/p", "a", "", "", "1", false), call(4, "about:blank", "a", "", "", "1", false)),
			check: func(t *testing.T, s *ci.Spec, _, _ string) {
				var got []string
				for _, p := range s.Pages {
					got = append(got, p.URL)
				}
				if s.Base != "http://h:1/" || strings.Join(got, " ") != "./ ./?q=1 https://o.test/p about:blank" {
					t.Errorf("base %q, urls %v", s.Base, got)
				}
				urls, err := s.URLs("http://moved.test/app/")
				if err != nil || strings.Join(urls, " ") != "http://moved.test/app/ http://moved.test/app/?q=1 https://o.test/p about:blank" {
					t.Errorf("moved by --base-url: %v %v", urls, err)
				}
			},
		},
		{
			name:   "the file bound stops the file and says so",
			opts:   record.Options{MaxFileBytes: 900},
			events: calls(call(1, page, "a", "", "", strings.Repeat("y", 200), false), call(1, page, "a", "", "", strings.Repeat("z", 600), false)),
			check: func(t *testing.T, s *ci.Spec, file, log string) {
				if n := len(s.Pages[0].Calls); n != 1 || len(file) > 900 || !strings.Contains(log, "longer than 900 bytes") {
					t.Errorf("%d calls, %d bytes, log %s", n, len(file), log)
				}
			},
		},
		{
			name:   "strings that YAML would read as something else stay strings",
			events: calls(call(1, page, "a", `{"d":"2026-11-28","y":"yes","o":"off","n":"0x10","e":"","nul":"null","t":"~"}`, "", `{"d":"2026-11-28T10:00:00Z","b":"true","f":"1.5","big":1e300,"neg":-0.5,"u":"ünï ${x} #c: d"}`, false)),
			check: func(t *testing.T, s *ci.Spec, _, _ string) {
				c := s.Pages[0].Calls[0]
				if string(c.Args) != `{"d":"2026-11-28","e":"","n":"0x10","nul":"null","o":"off","t":"~","y":"yes"}` {
					t.Errorf("args %s", c.Args)
				}
				if string(c.Expect.Snapshot) != `{"b":"true","big":1e+300,"d":"2026-11-28T10:00:00Z","f":"1.5","neg":-0.5,"u":"ünï ${x} #c: d"}` {
					t.Errorf("snapshot %s", c.Expect.Snapshot)
				}
			},
		},
		{
			name: "secrets in page URLs are placeholders there, marked, and kept out of the secrets to set",
			events: calls(
				call(1, "http://127.0.0.1:8080/cb?code=c1&access_token=tok-4242#id_token=idt-777&state=s", "a", `{"next":"https://ann:pw-9999@x.example/"}`, "", "token tok-4242", false),
				call(2, "https://ann:pw-5555@other.example/app", "b", "", "", "ok", false),
			),
			check: func(t *testing.T, s *ci.Spec, file, _ string) {
				for _, secret := range []string{"tok-4242", "idt-777", "pw-9999", "pw-5555", "ann"} {
					if strings.Contains(file, secret) {
						t.Errorf("%q is in the file:\n%s", secret, file)
					}
				}
				if len(s.Pages) != 2 || s.Pages[0].URL != "cb?code=c1&access_token=${ACCESS_TOKEN}#id_token=${ID_TOKEN}&state=s" ||
					s.Pages[1].URL != "https://$%7BURL_USER%7D:$%7BURL_PASSWORD_2%7D@other.example/app" {
					t.Errorf("pages %+v", s.Pages)
				}
				if string(s.Pages[0].Calls[0].Args) != `{"next":"https://${URL_USER}:${URL_PASSWORD}@x.example/"}` {
					t.Errorf("args %s", s.Pages[0].Calls[0].Args)
				}
				// ACCESS_TOKEN is in a snapshot too, so test must have it;
				// ID_TOKEN is in the URL only, which test does not fill in.
				if !slices.Equal(s.Secrets, []string{"ACCESS_TOKEN", "URL_USER", "URL_PASSWORD"}) {
					t.Errorf("secrets %v", s.Secrets)
				}
				for _, want := range []string{"# Page URLs had secrets", "# redacted: fill in ACCESS_TOKEN, ID_TOKEN by hand", "# redacted: fill in URL_PASSWORD_2, URL_USER by hand"} {
					if !strings.Contains(file, want) {
						t.Errorf("no %q in the file:\n%s", want, file)
					}
				}
			},
		},
		{
			name:   "an error result expects isError",
			events: calls(call(1, page, "fail", `{}`, "", "boom", true)),
			check: func(t *testing.T, s *ci.Spec, _, _ string) {
				e := s.Pages[0].Calls[0].Expect
				if e.IsError == nil || !*e.IsError || string(e.Snapshot) != `"boom"` {
					t.Errorf("expect %+v", e)
				}
			},
		},
		{
			name:   "the step bound stops the file and says so",
			opts:   record.Options{MaxSteps: 2},
			events: calls(call(1, page, "a", "", "", "1", false), call(1, page, "a", "", "", "2", false), call(1, page, "a", "", "", "3", false)),
			check: func(t *testing.T, s *ci.Spec, _, log string) {
				if n := len(s.Pages[0].Calls); n != 2 {
					t.Errorf("%d calls in the file", n)
				}
				if !strings.Contains(log, "recording stopped") || !strings.Contains(log, "2 calls") {
					t.Errorf("log: %s", log)
				}
			},
		},
		{
			name:   "a result over the snapshot bound is checked for isError only",
			opts:   record.Options{MaxSnapshotBytes: 10},
			events: calls(call(1, page, "big", "", "", strings.Repeat("x", 11), false)),
			check: func(t *testing.T, s *ci.Spec, _, log string) {
				c := s.Pages[0].Calls[0]
				if c.Expect.Snapshot != nil || !strings.Contains(c.Name, "not snapshotted") || !strings.Contains(log, "too long to snapshot") {
					t.Errorf("call %+v, log %s", c, log)
				}
			},
		},
		{
			name:   "arguments over their bound are left out, and the step says so",
			opts:   record.Options{MaxArgsBytes: 20},
			events: calls(call(1, page, "a", `{"text":"`+strings.Repeat("w", 30)+`"}`, "", "ok", false)),
			check: func(t *testing.T, s *ci.Spec, file, log string) {
				c := s.Pages[0].Calls[0]
				if c.Args != nil || !strings.Contains(c.Name, "arguments of 41 bytes, over the 20 kept: fill them in") || strings.Contains(file, "www") || !strings.Contains(log, "too long to keep") {
					t.Errorf("call %+v, log %s", c, log)
				}
			},
		},
		{
			name:   "a name no page has is not recorded",
			events: append(calls(call(1, page, "a", "", "", "1", false)), func(r *record.Recorder) { r.Call(hub.CallDetail{}) }),
			check: func(t *testing.T, s *ci.Spec, _, _ string) {
				if len(s.Pages[0].Calls) != 1 {
					t.Errorf("%d calls", len(s.Pages[0].Calls))
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log bytes.Buffer
			opts := tt.opts
			opts.File = filepath.Join(t.TempDir(), "s.yaml")
			opts.Logger = slog.New(slog.NewTextHandler(&log, nil))
			opts.Now = func() time.Time { return time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC) }
			r, err := record.New(opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range tt.events {
				e(r)
			}
			data, err := os.ReadFile(opts.File)
			if err != nil {
				t.Fatal(err)
			}
			s, err := ci.ParseSpec(data)
			if err != nil {
				t.Fatalf("not a spec: %v\n%s", err, data)
			}
			tt.check(t, s, string(data), log.String())
			// The status page's copy is the same spec.
			var b bytes.Buffer
			if err := r.WriteSpec(&b); err != nil || (tt.opts.MaxSteps == 0 && tt.opts.MaxFileBytes == 0 && b.String() != string(data)) {
				t.Errorf("WriteSpec (%v) differs from the file:\n%s", err, b.String())
			}
		})
	}
}

// TestRecorderValidAfterEveryCall: the file is a spec after each call, and
// no temporary file is left beside it.
func TestRecorderValidAfterEveryCall(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "s.yaml")
	r, err := record.New(record.Options{File: file})
	if err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(file); !strings.Contains(string(data), "pages: []") {
		t.Errorf("the empty recording:\n%s", data)
	}
	for i := 1; i <= 5; i++ {
		r.Call(call(1, page, "a", `{"i":1}`, "", `{"n":1}`, false))
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		s, err := ci.ParseSpec(data)
		if err != nil || len(s.Pages[0].Calls) != i {
			t.Fatalf("after call %d: %v\n%s", i, err, data)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("files left: %v", entries)
	}
}

// TestRecorderBadFile: a file that cannot be written fails at once.
func TestRecorderBadFile(t *testing.T) {
	_, err := record.New(record.Options{File: filepath.Join(t.TempDir(), "no", "such", "dir", "s.yaml")})
	if err == nil || !strings.Contains(err.Error(), "--record") {
		t.Errorf("err = %v", err)
	}
}

func TestSecretName(t *testing.T) {
	for name, want := range map[string]bool{
		"password": true, "newPassword": true, "pass": true, "PWD": true, "api_key": true, "apiKey": true,
		"X-Api-Key": true, "access_token": true, "client_secret": true, "Authorization": true, "pin": true,
		"otp": true, "credentials": true, "session-id": true, "cvv": true,
		"user": false, "author": false, "shipping": false, "passenger": false, "keyword": false, "name": false,
		"tokenizer_name": true, // a false alarm is a placeholder too many, never a leak
	} {
		if got := record.SecretName(name); got != want {
			t.Errorf("SecretName(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestRecorderRing: without a file, the last calls are kept in memory,
// bounded, for the status page.
func TestRecorderRing(t *testing.T) {
	r, err := record.New(record.Options{Ring: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"a", "b", "c", "d", "e"} {
		r.Call(call(1, page, tool, `{"password":"pw-secret-1"}`, "", "ok", false))
	}
	var b bytes.Buffer
	if err := r.WriteSpec(&b); err != nil {
		t.Fatal(err)
	}
	s, err := ci.ParseSpec(b.Bytes())
	if err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	var tools []string
	for _, c := range s.Pages[0].Calls {
		tools = append(tools, c.Tool)
	}
	if strings.Join(tools, "") != "cde" || strings.Contains(b.String(), "pw-secret-1") || strings.Join(s.Secrets, ",") != "PASSWORD" {
		t.Errorf("tools %v, secrets %v:\n%s", tools, s.Secrets, b.String())
	}
}

// TestRecorderConcurrent: calls from many goroutines at once all reach the
// file, which stays a spec (run with -race).
func TestRecorderConcurrent(t *testing.T) {
	file := filepath.Join(t.TempDir(), "s.yaml")
	r, err := record.New(record.Options{File: file})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	for g := range 8 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range 8 {
				r.Call(call(g+1, page, "a", `{"i":1}`, "", `{"n":1}`, false))
				if i == 4 {
					r.TabReloaded(g + 1)
				}
			}
		}()
	}
	for range 8 {
		<-done
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ci.ParseSpec(data)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range s.Pages {
		n += len(p.Calls)
	}
	if n != 64 {
		t.Errorf("%d calls in the file, want 64", n)
	}
}
