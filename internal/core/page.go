package core

// PageSetup is what CI mode sets on a tab before it loads a page: the
// viewport, extra request headers and cookies.
type PageSetup struct {
	// Viewport overrides the window size when Width and Height are set.
	Viewport *Viewport
	// Headers are sent with every request of the page.
	Headers map[string]string
	// Cookies are set before the page loads.
	Cookies []Cookie
}

// Viewport is a page's window size, in CSS pixels.
type Viewport struct {
	Width, Height int
	// Scale is the device scale factor (0 keeps the browser's).
	Scale float64
	// Mobile emulates a mobile device (meta viewport, overlay scrollbars).
	Mobile bool
}

// Cookie is a cookie to set before a page loads. Without Domain it is set
// for the page's URL.
type Cookie struct {
	Name, Value  string
	Domain, Path string
	Secure       bool
	HTTPOnly     bool
}

// PageLoad is how the main document of a tab loaded.
type PageLoad struct {
	// URL is the main document's URL as it was answered (after redirects).
	URL string `json:"url,omitempty"`
	// Status is the HTTP status of the main document; 0 when it had none
	// (a network error, a file: or data: URL) or has not answered yet.
	Status int `json:"status,omitempty"`
	// StatusText is the status line's text, such as "Not Found".
	StatusText string `json:"statusText,omitempty"`
	// Err is the network error of the main document, such as
	// "net::ERR_CONNECTION_REFUSED"; empty when it answered.
	Err string `json:"error,omitempty"`
	// Loaded says the main document's load event fired.
	Loaded bool `json:"loaded"`
}

// Failed reports whether the main document could not be loaded: a network
// error or an HTTP status of 400 or more.
func (l PageLoad) Failed() bool { return l.Err != "" || l.Status >= 400 }

// The kinds of PageProblem.
const (
	// ProblemException is an uncaught exception (or unhandled rejection).
	ProblemException = "exception"
	// ProblemConsole is a console.error (or console.assert) message.
	ProblemConsole = "console"
	// ProblemLog is an error the browser logged (a blocked script, a CSP
	// violation, a failed resource load).
	ProblemLog = "log"
	// ProblemRequest is a request of the page that failed or got an HTTP
	// status of 400 or more.
	ProblemRequest = "request"
)

// PageProblem is one error a page met while it loaded and ran.
type PageProblem struct {
	// Kind is one of the Problem* constants.
	Kind string `json:"kind"`
	// Text says what happened, as the browser or the page worded it (cut to
	// a bounded length).
	Text string `json:"text"`
	// URL is the script's (for an exception or message) or the request's.
	URL string `json:"url,omitempty"`
	// Line and Column are 1-based places in URL; 0 when unknown.
	Line   int `json:"line,omitempty"`
	Column int `json:"column,omitempty"`
	// Status is a failed request's HTTP status; 0 for a network error.
	Status int `json:"status,omitempty"`
}

// FormTool is a declarative WebMCP tool: a <form toolname> of the page.
type FormTool struct {
	// Name is the form's toolname.
	Name string `json:"name"`
	// AutoSubmit says the form has toolautosubmit, so an agent's call
	// submits it; without it, a person must.
	AutoSubmit bool `json:"autoSubmit"`
}

// PageDiagnosis is what a tab's page did while it loaded and ran, for
// telling why it has no tools.
type PageDiagnosis struct {
	// Load is how the main document loaded.
	Load PageLoad `json:"load"`
	// Problems are the page's errors, oldest first, at most a bounded
	// number; Dropped counts those left out.
	Problems []PageProblem `json:"problems,omitempty"`
	Dropped  int           `json:"dropped,omitempty"`
	// API says whether the main document has a WebMCP API at all
	// (document.modelContext or navigator.modelContext with registerTool):
	// "native", "polyfill" (webmcp-cdp's page script, or the page's own),
	// or "none". Empty when it could not be asked.
	API string `json:"api,omitempty"`
	// Forms are the declarative tools of the main document.
	Forms []FormTool `json:"forms,omitempty"`
}
