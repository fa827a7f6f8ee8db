package cli

import (
	"bytes"
	"cmp"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"strings"
	"time"

	"github.com/reprise-dev/reprise/casediff"
)

// ciReport is the JSON report of `reprise ci` (--json); docs/diff.md documents it.
type ciReport struct {
	Schema     string       `json:"schema"`
	Dataset    string       `json:"dataset"`
	Cases      int          `json:"cases"`
	Passed     int          `json:"passed"`
	Failed     int          `json:"failed"`
	Errors     int          `json:"errors"`
	DurationMS int64        `json:"duration_ms"`
	Results    []caseResult `json:"results"`
}

func newCIReport(dataset string, results []caseResult, took time.Duration) ciReport {
	r := ciReport{Schema: "reprise.ci.v1", Dataset: dataset, Cases: len(results), DurationMS: took.Milliseconds(), Results: results}
	for _, c := range results {
		switch c.Outcome {
		case outcomePassed:
			r.Passed++
		case outcomeFailed:
			r.Failed++
		default:
			r.Errors++
		}
	}
	return r
}

func (r ciReport) write(o *ciOptions) error {
	for _, out := range []struct {
		file   string
		render func() ([]byte, error)
	}{
		{o.jsonOut, func() ([]byte, error) { return json.MarshalIndent(r, "", "  ") }},
		{o.junit, r.junitXML},
		{o.markdownOut, r.markdown},
	} {
		if out.file == "" {
			continue
		}
		b, err := out.render()
		if err != nil {
			return err
		}
		if err := writeFileAtomic(out.file, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// JUnit XML, in the shape CI systems (GitHub Actions reporters, Jenkins, GitLab) read: one
// testsuite, one testcase per recorded case; a regression is a <failure>, a harness problem an
// <error>.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name      string      `xml:"name,attr"`
	Tests     int         `xml:"tests,attr"`
	Failures  int         `xml:"failures,attr"`
	Errors    int         `xml:"errors,attr"`
	Time      string      `xml:"time,attr"`
	Timestamp string      `xml:"timestamp,attr"`
	Cases     []junitCase `xml:"testcase"`
}

type junitCase struct {
	ClassName string        `xml:"classname,attr"`
	Name      string        `xml:"name,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
	SystemErr string        `xml:"system-err,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

func seconds(ms int64) string { return fmt.Sprintf("%.3f", float64(ms)/1000) }

func (r ciReport) junitXML() ([]byte, error) {
	suite := junitSuite{Name: "reprise ci " + r.Dataset, Tests: r.Cases, Failures: r.Failed, Errors: r.Errors,
		Time: seconds(r.DurationMS), Timestamp: time.Now().UTC().Format("2006-01-02T15:04:05")}
	for _, c := range r.Results {
		tc := junitCase{ClassName: "reprise." + cmp.Or(c.AgentName, "agent"), Name: c.CaseID, Time: seconds(c.DurationMS),
			SystemOut: c.Stdout, SystemErr: c.Stderr}
		switch c.Outcome {
		case outcomeFailed:
			var detail bytes.Buffer
			if failing, ok := c.failingReport(); ok {
				_ = casediff.WriteMarkdown(&detail, failing)
			}
			tc.Failure = &junitProblem{Message: c.Message, Type: "regression", Text: detail.String()}
		case outcomeError:
			tc.Error = &junitProblem{Message: c.Message, Type: "infrastructure"}
		}
		suite.Cases = append(suite.Cases, tc)
	}
	all := junitSuites{Name: "reprise ci", Tests: r.Cases, Failures: r.Failed, Errors: r.Errors, Time: suite.Time, Suites: []junitSuite{suite}}
	b, err := xml.MarshalIndent(all, "", "  ")
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), append(b, '\n')...), nil
}

func (r ciReport) markdown() ([]byte, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "# reprise ci: %d cases, %d passed, %d failed, %d errors\n\n", r.Cases, r.Passed, r.Failed, r.Errors)
	b.WriteString("| case | agent | outcome | why |\n|---|---|---|---|\n")
	for _, c := range r.Results {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", c.CaseID, c.AgentName, c.Outcome, cellText(c.Message))
	}
	for _, c := range r.Results {
		failing, ok := c.failingReport()
		if c.Outcome != outcomeFailed || !ok {
			continue
		}
		b.WriteString("\n")
		var d bytes.Buffer
		if err := casediff.WriteMarkdown(&d, failing); err != nil {
			return nil, err
		}
		b.Write(d.Bytes())
	}
	return []byte(b.String()), nil
}

// failingReport is a failed case's failing findings as a diff report, for the JUnit and
// Markdown reports; ok is false when it has none. A run that emitted no case has no diff, but
// the requests the replay server refused may still fail it.
func (c caseResult) failingReport() (rep casediff.Report, ok bool) {
	if len(c.Failing) == 0 {
		return rep, false
	}
	if c.Diff != nil {
		return casediff.Report{Schema: c.Diff.Schema, A: c.Diff.A, B: c.Diff.B, Findings: c.Failing}, true
	}
	return casediff.Report{A: casediff.CaseRef{CaseID: c.CaseID, AgentName: c.AgentName, Status: "recorded"},
		B: casediff.CaseRef{CaseID: "no run", Status: "none emitted"}, Findings: c.Failing}, true
}

func cellText(s string) string { return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s) }
