package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/reprise-dev/reprise/casediff"
	"github.com/reprise-dev/reprise/replaycase"
)

// Policy says which findings fail a case in `reprise ci`. The file (YAML):
//
//	fail_on: [tool_args_changed, answer_changed]   # default: every type but the secondary ones (usage, cost, latency, model output)
//	allow:                                          # drifts that are expected
//	  - type: retrieval_drift
//	    path: "retrieval_refs[*].documents"         # optional; * matches anything, on path_b or path_a
//	    case: 0a1b…                                 # optional, one whole case id (32 hex)
type Policy struct {
	FailOn []casediff.FindingType `yaml:"fail_on"`
	Allow  []AllowRule            `yaml:"allow"`
}

// AllowRule excuses matching findings.
type AllowRule struct {
	Type casediff.FindingType `yaml:"type"`
	Path string               `yaml:"path"`
	Case string               `yaml:"case"`
}

var knownTypes = map[casediff.FindingType]bool{
	casediff.RetrievalDrift: true, casediff.ToolCallAdded: true, casediff.ToolCallRemoved: true,
	casediff.ToolArgsChanged: true, casediff.ToolResultChanged: true, casediff.ModelCallAdded: true,
	casediff.ModelCallRemoved: true, casediff.PromptChanged: true, casediff.ModelConfigChanged: true,
	casediff.ModelOutputChanged: true,
	casediff.RouteChanged:       true, casediff.AnswerChanged: true, casediff.UsageChanged: true,
	casediff.LatencyChanged: true, casediff.CostChanged: true, replayMiss: true,
}

func loadPolicy(file string) (Policy, error) {
	var p Policy
	if file == "" {
		return p, nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return p, err
	}
	if err := policyShape(b); err != nil {
		return p, fmt.Errorf("policy %s: %w", file, err)
	}
	// Unknown keys are errors: a misspelt key is otherwise dropped, and an allow rule that lost
	// its "type" that way excuses every finding.
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&p); err != nil && !errors.Is(err, io.EOF) { // EOF: an empty file, the default policy
		return p, fmt.Errorf("policy %s: %w", file, err)
	}
	// Only one document is read: rules in a second one would be dropped in silence.
	var more any
	if err := dec.Decode(&more); !errors.Is(err, io.EOF) {
		return p, fmt.Errorf("policy %s: more than one YAML document (a \"---\" between two parts?): put every rule in one", file)
	}
	for _, t := range p.FailOn {
		if !knownTypes[t] {
			return p, fmt.Errorf("policy %s: fail_on: unknown finding type %q", file, t)
		}
	}
	for i, r := range p.Allow {
		if r.Type != "" && !knownTypes[r.Type] {
			return p, fmt.Errorf("policy %s: allow[%d].type: unknown finding type %q", file, i, r.Type)
		}
		if r.Type == "" && r.Path == "" && r.Case == "" {
			return p, fmt.Errorf("policy %s: allow[%d] has no type, path or case: it would excuse every finding", file, i)
		}
		// Rules compare whole ids: a prefix, which names a case everywhere else, would match
		// none and excuse nothing.
		if r.Case != "" && !replaycase.IsID(r.Case) {
			return p, fmt.Errorf("policy %s: allow[%d].case %q: want a whole case id, 32 lower-case hex digits as reprise ls prints it (a prefix matches no case)", file, i, r.Case)
		}
	}
	return p, nil
}

// fails reports whether a finding of case caseID fails it under the policy.
func (p Policy) fails(caseID string, f casediff.Finding) bool {
	if len(p.FailOn) == 0 {
		if f.Type.Secondary() {
			return false
		}
	} else {
		listed := false
		for _, t := range p.FailOn {
			listed = listed || t == f.Type
		}
		if !listed {
			return false
		}
	}
	for _, r := range p.Allow {
		if (r.Type == "" || r.Type == f.Type) && (r.Case == "" || r.Case == caseID) && (r.Path == "" || matchPath(r.Path, f)) {
			return false
		}
	}
	return true
}

// matchPath matches a finding's paths against a pattern in which * stands for any text and
// everything else, brackets included, is literal (JSON paths are full of brackets).
func matchPath(pattern string, f casediff.Finding) bool {
	re := regexp.MustCompile("^" + strings.ReplaceAll(regexp.QuoteMeta(pattern), `\*`, ".*") + "$")
	for _, p := range []string{f.PathB, f.PathA} {
		if p != "" && re.MatchString(p) {
			return true
		}
	}
	return false
}
