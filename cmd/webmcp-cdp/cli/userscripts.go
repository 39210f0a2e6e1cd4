package cli

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/spf13/pflag"

	"github.com/webmcp-cdp/webmcp-cdp/internal/userscript"
)

// Userscripts is --userscript: the operator's userscripts, read at start
// (Load) and again on SIGHUP (Reload).
type Userscripts struct {
	paths []string
	// Set holds the scripts in force: nil without --userscript.
	Set *userscript.Set
}

// Register adds --userscript to fs.
func (u *Userscripts) Register(fs *pflag.FlagSet) {
	fs.StringArrayVar(&u.paths, "userscript", nil, "run this userscript (a .user.js file with a // ==UserScript== header; a directory gives every *.user.js in it) in the pages it matches, after the page API: its tools are page tools; repeatable, read at start and again on SIGHUP (see docs/userscripts.md)")
}

// Load reads the scripts --userscript names. A script that cannot be used
// (unreadable, not a userscript, a @grant other than none) is a usage
// error, exit status 2. Each script read is logged, and the header keys it
// ignores at debug level. With scripts, SIGHUP reads them again (Reload)
// instead of ending ctx's command (WithHangup).
func (u *Userscripts) Load(ctx context.Context, logger *slog.Logger) error {
	if len(u.paths) == 0 {
		return nil
	}
	scripts, err := userscript.Load(u.paths)
	if err != nil {
		return Usage(fmt.Errorf("--userscript: %w", err))
	}
	for _, s := range scripts {
		logLoaded(logger, s)
	}
	u.Set = userscript.NewSet(scripts)
	OnHangup(ctx, func() { u.Reload(logger) })
	return nil
}

// Reload reads the scripts again, as Load does, and puts them in force for
// the documents loaded from now on. A file that cannot be used now is
// logged with why, and its previous version stays in force; nothing is
// replaced when nothing changed. One line says what changed.
func (u *Userscripts) Reload(logger *slog.Logger) {
	prev, _ := u.Set.Scripts()
	next, r := userscript.Reload(u.paths, prev)
	for _, f := range r.Refused {
		logger.Warn("a userscript read again is refused; its previous version, if it had one, stays in force", "file", f.Path, "err", f.Err)
	}
	old := make(map[string]*userscript.Script, len(prev))
	for _, s := range prev {
		old[s.Name] = s
	}
	for _, s := range next {
		if o := old[s.Name]; o == nil || o.File != s.File || o.Source != s.Source {
			logLoaded(logger, s)
		}
	}
	if r.Added+r.Changed+r.Removed > 0 {
		u.Set.Replace(next)
	}
	logger.Info("userscripts read again (SIGHUP): documents loaded from now on run these; those open keep what they ran",
		"loaded", r.Loaded, "added", r.Added, "changed", r.Changed, "removed", r.Removed, "refused", len(r.Refused))
}

// logLoaded logs a script read, and the header keys it ignores at debug
// level.
func logLoaded(logger *slog.Logger, s *userscript.Script) {
	logger.Info("userscript loaded", "script", s.Name, "file", s.File, "run-at", string(s.RunAt), "match", len(s.Matches)+len(s.Includes), "exclude", len(s.Excludes))
	if len(s.Ignored) > 0 {
		logger.Debug("userscript header keys ignored", "script", s.Name, "keys", s.Ignored)
	}
}
