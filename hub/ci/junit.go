package ci

import (
	"encoding/xml"
	"fmt"
	"io"
	"time"
)

// The JUnit XML that CI systems read (Jenkins, GitLab, GitHub actions that
// publish test results): testsuites, one testsuite per page, one testcase
// per check (the load, the tools, the lint of each tool, each call), with a
// failure element when a check failed, an error element when it could not
// be made (the page did not load), and skipped when it was not run.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Error     *junitFailure `xml:"error,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

func seconds(d time.Duration) string {
	return fmt.Sprintf("%.3f", d.Seconds())
}

// WriteJUnit writes the report as JUnit XML.
func (r *Report) WriteJUnit(w io.Writer) error {
	doc := junitSuites{Name: r.Name, Time: seconds(r.Took)}
	for _, s := range r.Suites {
		js := junitSuite{
			Name:       s.Name,
			Time:       seconds(s.Took),
			Properties: []junitProperty{{Name: "url", Value: s.URL}},
		}
		for _, c := range s.Cases {
			jc := junitCase{Name: c.Name, Classname: s.Name, Time: seconds(c.Took)}
			text := func(msg string) string {
				if c.Detail != "" {
					return msg + "\n" + c.Detail
				}
				return msg
			}
			switch c.Status() {
			case "error":
				jc.Error = &junitFailure{Message: c.Error, Type: "error", Text: text(c.Error)}
				js.Errors++
			case "failed":
				jc.Failure = &junitFailure{Message: c.Failure, Type: "failure", Text: text(c.Failure)}
				js.Failures++
			case "skipped":
				jc.Skipped = &junitSkipped{Message: c.Skipped}
				js.Skipped++
			default:
				jc.SystemOut = c.Detail
			}
			js.Tests++
			js.Cases = append(js.Cases, jc)
		}
		doc.Tests += js.Tests
		doc.Failures += js.Failures
		doc.Errors += js.Errors
		doc.Skipped += js.Skipped
		doc.Suites = append(doc.Suites, js)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("writing JUnit XML: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}
