package cli

import (
	"fmt"
	"log/slog"

	"github.com/spf13/pflag"

	"github.com/webmcp-cdp/webmcp-cdp/internal/userscript"
)

// Userscripts is --userscript: the operator's userscripts, read once at
// start (Load).
type Userscripts struct {
	paths []string
	// Scripts are the scripts read by Load.
	Scripts []*userscript.Script
}

// Register adds --userscript to fs.
func (u *Userscripts) Register(fs *pflag.FlagSet) {
	fs.StringArrayVar(&u.paths, "userscript", nil, "run this userscript (a .user.js file with a // ==UserScript== header; a directory gives every *.user.js in it) in the pages it matches, after the page API: its tools are page tools; repeatable, read at start (see docs/userscripts.md)")
}

// Load reads the scripts --userscript names. A script that cannot be used
// (unreadable, not a userscript, a @grant other than none) is a usage
// error, exit status 2. Each script read is logged, and the header keys it
// ignores at debug level.
func (u *Userscripts) Load(logger *slog.Logger) error {
	if len(u.paths) == 0 {
		return nil
	}
	scripts, err := userscript.Load(u.paths)
	if err != nil {
		return Usage(fmt.Errorf("--userscript: %w", err))
	}
	for _, s := range scripts {
		logger.Info("userscript loaded", "script", s.Name, "file", s.File, "run-at", string(s.RunAt), "match", len(s.Matches)+len(s.Includes), "exclude", len(s.Excludes))
		if len(s.Ignored) > 0 {
			logger.Debug("userscript header keys ignored", "script", s.Name, "keys", s.Ignored)
		}
	}
	u.Scripts = scripts
	return nil
}
