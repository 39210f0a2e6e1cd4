package cdp

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"

	jsonv2 "github.com/chromedp/cdproto/cdp/jsonv2"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"

	"github.com/webmcp-cdp/webmcp-cdp/internal/userscript"
)

// This file injects the operator's userscripts (Options.Userscripts). Each
// is a script for new documents of its own, added to every target right
// after the page script, so that it runs in the page's main world once the
// page API is in place, in every frame, and (runImmediately) in documents
// already open when we attach. The page tests its own URL against the
// script's patterns (userscript.Script.Pattern, valid JavaScript), since
// the URL of a document to come is not known when the script is added.
// A script that throws stops alone: the browser reports the exception, and
// its source URL names the script in our log. When the operator's files
// are read again, the new set replaces the old in every target, for the
// documents loaded from then on (userscripts_reload.go).

// userscriptURL starts the source URL of each injected userscript; the
// script's number and its file's name follow.
const userscriptURL = "webmcp-cdp-userscript/"

// userscriptWrapper runs a userscript in a matching document, once per
// document, at its @run-at. %[1]s and %[2]s are the match and exclude
// regular expressions as JSON strings, %[3]t is @noframes, %[4]s the guard
// key (JSON), %[5]s the run-at, %[6]s the script, %[7]s the source URL,
// %[8]s the key of the page script's userscripts.run (JSON) and %[9]d the
// script's number. The script starts on line userscriptFirstLine
// (0-based).
//
// The page script (polyfill/registry.js) marks the tools a script registers
// while it runs, for their _meta: the wrapper takes its userscripts object
// and claims the key as the document starts, before the page's scripts (a
// wrapper that does not match claims it too), and runs the script through
// it. The key is written into the calls, never in a variable the script
// could name.
//
// A frame's or popup's initial about:blank window is reused for the
// same-origin document that replaces it, and Chromium does not run the
// scripts for new documents again for that document (polyfill/helpers.js,
// syncDoc): a wrapper that runs in an about:blank document hands itself to
// the page script's userscripts.again, which runs it once more as the page
// script notices the new document (at the page's first use of the API, or
// its readystatechange at the latest). Without that, a same-origin frame
// got the page script but none of the userscripts (seen beside stress-ng:
// framed.html's frame, adopted once with no about:blank document of its
// own, ran no userscript; one run in several, not reproduced at will).
const userscriptWrapper = `(() => {
const wrapper = () => {
const us = Reflect.getOwnPropertyDescriptor(document, Symbol.for('webmcp-cdp/userscripts'));
const marked = us && us.value && typeof us.value.run === 'function' ? us.value.run : null;
if (marked) Reflect.apply(us.value.claim, us.value, [%[8]s]);
const match = new RegExp(%[1]s), exclude = %[2]s ? new RegExp(%[2]s) : null;
let href;
try { href = '' + location.href; } catch (e) { return; }
if (href === 'about:blank' && us && us.value && typeof us.value.again === 'function') Reflect.apply(us.value.again, us.value, [wrapper]);
if (!match.test(href) || (exclude && exclude.test(href)) || (%[3]t && window.top !== window)) return;
const guard = Symbol.for(%[4]s);
if (Reflect.getOwnPropertyDescriptor(document, guard)) return;
Reflect.defineProperty(document, guard, { value: true });
const apply = Reflect.apply, listen = EventTarget.prototype.addEventListener, later = setTimeout;
const when = %[5]q;
const run = function () {
%[6]s
};
const go = () => marked ? apply(marked, us.value, [%[8]s, %[9]d, run]) : apply(run, window, []);
if (when === 'document-start' || document.readyState !== 'loading') { go(); return; }
apply(listen, document, ['DOMContentLoaded', when === 'document-end' ? go : () => later(go, 0), { once: true }]);
};
wrapper();
})();
//# sourceURL=%[7]s
`

// userscriptFirstLine is the 0-based line of the wrapper the script
// starts on.
var userscriptFirstLine = strings.Count(userscriptWrapper[:strings.Index(userscriptWrapper, "%[6]s")], "\n")

// userscripts are a Browser's injected userscripts: those in force
// (userscript.Set, replaced on a reload) and every one injected before,
// which documents still open may have run. Its methods are safe for
// concurrent use.
type userscripts struct {
	mu    sync.RWMutex
	nonce string
	// gen counts the sets put in force (set).
	gen int
	// now are the scripts in force, with their
	// Page.addScriptToEvaluateOnNewDocument params: params for a target
	// being set up (runImmediately: documents open at attach run them),
	// later for one followed already (documents open keep what they ran).
	now           []*userscript.Script
	params, later []jsonv2.Value
	// byURL finds every script injected by its source URL.
	byURL map[string]usRef
	// names are the @names of every script injected, by number (the page
	// script's userscripts.run and the source URL carry the number).
	names []string
}

// usRef is an injected script, as an exception or a stack names it.
type usRef struct{ name, file string }

// name returns the @name of script n, or "" when there is none such.
func (u *userscripts) name(n *int) string {
	u.mu.RLock()
	defer u.mu.RUnlock()
	if n == nil || *n < 0 || *n >= len(u.names) {
		return ""
	}
	return u.names[*n]
}

// lookup returns the script injected under a source URL.
func (u *userscripts) lookup(url string) (usRef, bool) {
	u.mu.RLock()
	defer u.mu.RUnlock()
	s, ok := u.byURL[url]
	return s, ok
}

// any says whether a script was ever injected.
func (u *userscripts) any() bool {
	u.mu.RLock()
	defer u.mu.RUnlock()
	return len(u.byURL) > 0
}

// current returns the set in force: its number, its scripts and their
// params for a target being set up and for one followed already.
func (u *userscripts) current() (gen int, now []*userscript.Script, params, later []jsonv2.Value) {
	u.mu.RLock()
	defer u.mu.RUnlock()
	return u.gen, u.now, u.params, u.later
}

// fromStack returns the @name of the first userscript in a stack (a
// native tool's registration), or "".
func (u *userscripts) fromStack(st *runtime.StackTrace) string {
	if st == nil || !u.any() {
		return ""
	}
	for _, f := range st.CallFrames {
		if s, ok := u.lookup(f.URL); ok {
			return s.name
		}
	}
	return ""
}

// prepare renders the wrappers of scripts, numbered from 0 (as a Set
// numbers those read at start). The guard key is derived from nonce, so
// that a document kept across a reconnection (same Marks) does not run a
// script twice, and a page cannot predict it.
func (u *userscripts) prepare(scripts []*userscript.Script, nonce string) error {
	u.nonce = nonce
	past := make([]userscript.Ref, len(scripts))
	for i, s := range scripts {
		past[i] = userscript.Ref{Name: s.Name, File: s.File}
	}
	return u.set(scripts, past)
}

// set renders each script's wrapper and puts them in force. past names
// every script put in force before, by number, and the scripts last
// (userscript.Set.Numbered): documents still open may run any of them.
func (u *userscripts) set(scripts []*userscript.Script, past []userscript.Ref) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	names := make([]string, len(past))
	byURL := make(map[string]usRef, len(past))
	for n, r := range past {
		names[n] = r.Name
		byURL[sourceURL(n, r.File)] = usRef{name: r.Name, file: r.File}
	}
	first := len(past) - len(scripts)
	key := sha256.Sum256([]byte(u.nonce + "\x00userscripts.run"))
	params := make([]jsonv2.Value, 0, len(scripts))
	later := make([]jsonv2.Value, 0, len(scripts))
	for i, s := range scripts {
		n := first + i
		match, exclude := s.Pattern()
		sum := sha256.Sum256([]byte(u.nonce + "\x00userscript\x00" + s.Name))
		url := sourceURL(n, s.File)
		src := fmt.Sprintf(userscriptWrapper, jsString(match), jsString(exclude), s.NoFrames,
			jsString("webmcp-cdp/userscript/"+hex.EncodeToString(sum[:12])), string(s.RunAt), s.Source, url,
			jsString(hex.EncodeToString(key[:16])), n)
		for _, p := range []struct {
			to  *[]jsonv2.Value
			now bool
		}{{&params, true}, {&later, false}} {
			v, err := jsonv2.Marshal(&page.AddScriptToEvaluateOnNewDocumentParams{Source: src, RunImmediately: ptr(p.now)})
			if err != nil {
				return fmt.Errorf("encoding userscript %s: %w", s.File, err)
			}
			*p.to = append(*p.to, v)
		}
	}
	u.names, u.byURL, u.now, u.params, u.later = names, byURL, scripts, params, later
	u.gen++
	return nil
}

// sourceURL is the source URL of script number n, read from file.
func sourceURL(n int, file string) string {
	return userscriptURL + strconv.Itoa(n) + "/" + safeFileName(file)
}

// jsString is s as a JavaScript string literal (JSON's, with U+2028 and
// U+2029 escaped, as encoding/json does).
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// safeFileName is the base name of a file, kept to characters that read
// well in a URL.
func safeFileName(file string) string {
	if i := strings.LastIndexAny(file, `/\`); i >= 0 {
		file = file[i+1:]
	}
	return strings.Map(func(r rune) rune {
		if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || strings.ContainsRune("._-", r) {
			return r
		}
		return '_'
	}, file)
}

// onException logs an uncaught exception whose stack runs through a
// userscript: its name, its file and line, the document and the error.
// Other exceptions are the page's own and are left alone (CI mode's
// diagnosis records them).
func (b *Browser) onException(t *targetState, params jsonv2.Value) {
	if !b.us.any() {
		return
	}
	var ev runtime.EventExceptionThrown
	if decode(params, &ev) != nil || ev.ExceptionDetails == nil {
		return
	}
	e := ev.ExceptionDetails
	at := []struct {
		url  string
		line int64
	}{{e.URL, e.LineNumber}}
	if e.StackTrace != nil {
		for _, f := range e.StackTrace.CallFrames {
			at = append(at, struct {
				url  string
				line int64
			}{f.URL, f.LineNumber})
		}
	}
	for _, a := range at {
		s, ok := b.us.lookup(a.url)
		if !ok {
			continue
		}
		text := e.Text
		if e.Exception != nil && e.Exception.Description != "" {
			text = firstLine(e.Exception.Description)
		}
		url := t.url
		b.mu.Lock()
		if d := t.contexts[e.ExecutionContextID]; d != nil && d.url != "" {
			url = d.url
		} else if d != nil && t.frames[d.frameID].url != "" {
			url = t.frames[d.frameID].url
		}
		b.mu.Unlock()
		line := int(a.line) - userscriptFirstLine + 1
		b.logger.Warn("a userscript threw; the page and the other scripts go on", "script", s.name, "file", s.file, "line", line, "url", url, "err", text)
		return
	}
}
