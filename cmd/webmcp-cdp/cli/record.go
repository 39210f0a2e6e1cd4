package cli

import (
	"log/slog"

	"github.com/webmcp-cdp/webmcp-cdp/hub/record"
)

// Recorder returns the recorder of --record FILE, or nil when file is
// empty; a file it cannot write is a usage error.
func Recorder(file string, logger *slog.Logger) (*record.Recorder, error) {
	if file == "" {
		return nil, nil
	}
	r, err := record.New(record.Options{File: file, Logger: logger})
	if err != nil {
		return nil, Usage(err)
	}
	logger.Info("recording the session's calls as a spec", "file", file)
	return r, nil
}
