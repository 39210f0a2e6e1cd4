package ci

import (
	"encoding/xml"
	"fmt"
	"io"
	"time"
)

// The JUnit XML that CI systems read (Jenkins, GitLab, GitHub actions that
// publish test results): testsuites, one testsuite per page, one testcase
// per check, with a failure element when it failed.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
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
	SystemOut string        `xml:"system-out,omitempty"`
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
			if c.Failure != "" {
				text := c.Failure
				if c.Detail != "" {
					text += "\n" + c.Detail
				}
				jc.Failure = &junitFailure{Message: c.Failure, Type: "failure", Text: text}
				js.Failures++
			} else if c.Detail != "" {
				jc.SystemOut = c.Detail
			}
			js.Tests++
			js.Cases = append(js.Cases, jc)
		}
		doc.Tests += js.Tests
		doc.Failures += js.Failures
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
