package ci

import (
	"fmt"
	"io"
	"os"
)

// This file writes what `webmcp-cdp test` leaves besides its text: --update's
// snapshots and the report's other forms.

// WriteUpdates writes --update's new snapshots into the spec file and
// prints what changed.
func WriteUpdates(out io.Writer, file string, ups []SnapshotUpdate) error {
	if len(ups) == 0 {
		fmt.Fprintf(out, "--update: every snapshot still holds; %s is unchanged\n", file)
		return nil
	}
	if err := UpdateSnapshots(file, ups); err != nil {
		return fmt.Errorf("--update: %w", err)
	}
	fmt.Fprintf(out, "--update: rewrote %s in %s:\n", Plural(len(ups), "snapshot"), file)
	for _, u := range ups {
		fmt.Fprintf(out, "  %s (pages[%d].calls[%d]):\n", u.Name, u.Page, u.Call)
		for _, l := range u.Diff {
			fmt.Fprintf(out, "    %s\n", l)
		}
	}
	return nil
}

// Outputs are where a report goes besides the text on stdout.
type Outputs struct {
	// Stdout takes the JSON report when Format is "json".
	Stdout io.Writer
	// Annotations takes GitHub's workflow commands in GitHub Actions.
	Annotations io.Writer
	// Format is "text" or "json".
	Format string
	// JUnit, when not nil, takes the JUnit XML and is closed; JUnitName
	// names it in errors.
	JUnit     io.WriteCloser
	JUnitName string
	// Getenv reads GITHUB_ACTIONS and GITHUB_STEP_SUMMARY (os.Getenv).
	Getenv func(string) string
}

// WriteOutputs writes the JSON report, the JUnit file, and, in GitHub
// Actions, the annotations and the step summary.
func (rep *Report) WriteOutputs(o Outputs) error {
	format, junit, stdout, annotations := o.Format, o.JUnitName, o.Stdout, o.Annotations
	if format == "json" {
		if err := rep.WriteJSON(stdout); err != nil {
			return fmt.Errorf("writing the JSON report: %w", err)
		}
	}
	if junitFile := o.JUnit; junitFile != nil {
		if err := rep.WriteJUnit(junitFile); err != nil {
			return fmt.Errorf("--junit %s: %w", junit, err)
		}
		if err := junitFile.Close(); err != nil {
			return fmt.Errorf("--junit %s: %w", junit, err)
		}
	}
	if o.Getenv("GITHUB_ACTIONS") == "true" {
		if err := rep.WriteAnnotations(annotations, rep.Name); err != nil {
			return fmt.Errorf("writing the GitHub annotations: %w", err)
		}
	}
	if path := o.Getenv("GITHUB_STEP_SUMMARY"); path != "" {
		sf, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return fmt.Errorf("GITHUB_STEP_SUMMARY: %w", err)
		}
		err = rep.WriteSummary(sf)
		if cerr := sf.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("GITHUB_STEP_SUMMARY %s: %w", path, err)
		}
	}
	return nil
}
