package serve

import (
	"github.com/webmcp-cdp/webmcp-cdp/cdp"
	"github.com/webmcp-cdp/webmcp-cdp/hub/mcpserver"
	"github.com/webmcp-cdp/webmcp-cdp/internal/userscript"
)

// This file shows the operator's userscripts (--userscript) on the status
// page: the scripts in force (the Set, which a reload replaces) with the
// documents each ran in. Each served browser set (a Session, RunFleet's
// fleet, a person's space) records its own documents, so a person's status
// page shows the documents of their space alone.

// cdpWithRuns returns the CDP options of a served browser set, recording
// the documents its userscripts run in in runs (nil without
// userscripts).
func (o *Options) cdpWithRuns() (cdp.Options, *userscript.Runs) {
	c := o.CDP
	if c.Userscripts == nil {
		return c, nil
	}
	c.UserscriptRuns = userscript.NewRuns()
	return c, c.UserscriptRuns
}

// userscriptStatus returns the status page's view of the scripts in force
// with the documents of runs, for HTTPOptions.Userscripts (nil without
// userscripts).
func userscriptStatus(set *userscript.Set, runs *userscript.Runs) func(*mcpserver.Server) []userscript.Status {
	if set == nil {
		return nil
	}
	return func(*mcpserver.Server) []userscript.Status {
		scripts, _ := set.Scripts()
		return userscript.Report(scripts, runs)
	}
}

// userscripts is HTTPOptions.Userscripts in spaces mode: the scripts in
// force (alike in every space) with the documents of srv's space.
func (ss *Spaces) userscripts(srv *mcpserver.Server) []userscript.Status {
	var runs *userscript.Runs
	for _, s := range ss.open() {
		if s.Server == srv {
			runs = s.runs
		}
	}
	scripts, _ := ss.opts.CDP.Userscripts.Scripts()
	return userscript.Report(scripts, runs)
}
