package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/reprise-dev/reprise/casediff"
	"github.com/reprise-dev/reprise/replaycase"
)

// ciOptions are the flags of `reprise ci`.
type ciOptions struct {
	dataset, junit, jsonOut, markdownOut, record, policyFile, mode, upstream, scrubKeyEnv string
	jobs                                                                                  int
	timeout                                                                               time.Duration
	sel                                                                                   selection
	command                                                                               []string
}

func runCI(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("ci", `usage: reprise ci --dataset DIR [--status …] [--agent …] [--metadata K=V] [--case ID] [-j N]
                  [--junit FILE] [--json FILE] [--markdown FILE] [--record DIR] [--policy FILE]
                  [--mode strict|hybrid [--upstream URL]] -- COMMAND [ARGS…]
For each selected case (default: every accepted case), COMMAND runs with OPENAI_BASE_URL and
ANTHROPIC_BASE_URL pointed at a replay server for that case, OTEL_EXPORTER_OTLP_ENDPOINT at an
in-process OTLP receiver, REPRISE_CASE_ID / REPRISE_CASE_FILE saying what to ask, and a placeholder
OPENAI_API_KEY / ANTHROPIC_API_KEY where the environment has none (the SDKs need one). The run it
emits becomes a case (metadata derived_from = the recorded case), compared with the recording
decision point by decision point. With --mode hybrid, a run that diverges continues against the
live API from its first miss on.
Exit 0: every case passed; 1: a case regressed; 2: usage or infrastructure error.`)
	var o ciOptions
	fs.StringVar(&o.dataset, "dataset", defaultDataset, "dataset root holding the recorded cases")
	fs.IntVar(&o.jobs, "j", 1, "cases replayed at once")
	fs.StringVar(&o.junit, "junit", "", "write a JUnit XML report to this file")
	fs.StringVar(&o.jsonOut, "json", "", "write the JSON report (docs/diff.md) to this file")
	fs.StringVar(&o.markdownOut, "markdown", "", "write a Markdown report to this file")
	fs.StringVar(&o.record, "record", "", "also write the new runs as cases into this dataset root")
	fs.StringVar(&o.policyFile, "policy", "", "YAML file: which finding types fail a case, which drifts are allowed")
	fs.StringVar(&o.mode, "mode", "strict", "replay mode: strict (any miss fails the case; zero live model calls) or hybrid (from a run's first miss on, its model calls go to --upstream)")
	fs.StringVar(&o.upstream, "upstream", "", "hybrid mode: the live OpenAI API base URL, e.g. https://api.openai.com/v1 (the command's own OPENAI_API_KEY is forwarded)")
	fs.StringVar(&o.scrubKeyEnv, "scrub-key-env", scrubKeyVar, "environment variable holding the scrub key the dataset was recorded with")
	fs.DurationVar(&o.timeout, "timeout", 5*time.Minute, "longest one run of COMMAND may take")
	o.sel.register(fs, "accepted")
	pos, command, err := parseInterleaved(fs, args)
	o.command = command
	switch {
	case err != nil:
	case len(pos) > 0:
		err = fmt.Errorf("unexpected argument %q (the command goes after --)", pos[0])
	case len(o.command) == 0:
		err = errors.New("no command: reprise ci [flags] -- COMMAND [ARGS…]")
	case o.jobs < 1:
		err = fmt.Errorf("-j %d: want at least 1", o.jobs)
	case o.mode != "strict" && o.mode != "hybrid":
		err = fmt.Errorf("--mode %q: want strict or hybrid", o.mode)
	case o.mode == "hybrid" && o.upstream == "":
		err = errors.New("--mode hybrid needs --upstream URL (the live API's base URL)")
	case o.mode == "strict" && o.upstream != "":
		err = errors.New("--upstream is used only with --mode hybrid (strict replay never calls a live API)")
	case o.timeout <= 0:
		err = fmt.Errorf("--timeout %s: want a positive duration", o.timeout)
	default:
		err = o.sel.validate()
	}
	if err != nil {
		return usageError(stdout, stderr, fs, err)
	}
	policy, err := loadPolicy(o.policyFile)
	if err != nil {
		fmt.Fprintln(stderr, "reprise ci:", err)
		return ExitError
	}
	// The quarantined cases --status accepted leaves out but the other filters select: their
	// recordings are not whole, so they are not replayed, and the output says so. Like the
	// selection, a case's latest row decides.
	notReplayed := map[string]bool{}
	anyStatus := o.sel
	anyStatus.status = "all"
	cases, err := scanDataset(o.dataset, func(c *replaycase.Case) (*replaycase.Case, bool) {
		if o.sel.status == "accepted" && c.Status == replaycase.StatusQuarantined && anyStatus.keep(c) {
			notReplayed[c.CaseID] = true
		} else {
			delete(notReplayed, c.CaseID)
		}
		if !o.sel.keep(c) {
			return nil, false
		}
		cc := *c // c points into the scan's read buffer: keep this row only
		return &cc, true
	})
	if err != nil {
		fmt.Fprintln(stderr, "reprise ci:", err)
		return ExitError
	}
	sayNotReplayed := func() {
		if len(notReplayed) > 0 {
			fmt.Fprintf(stderr, "reprise ci: %d quarantined cases not replayed (%s): --status all replays them\n", len(notReplayed), someIDs(notReplayed))
		}
	}
	// Every case asked for by id must run: a --case that selects nothing (a typo, a case of
	// another dataset, or one the other filters exclude) would otherwise be skipped silently
	// and the gate would pass on the others. Checked first, so that an empty selection made
	// of such ids is reported by the id.
	for _, id := range o.sel.ids {
		if !slices.ContainsFunc(cases, func(c *replaycase.Case) bool { return strings.HasPrefix(c.CaseID, id) }) {
			fmt.Fprintf(stderr, "reprise ci: --case %q: no selected case in %s has this id (see reprise ls --status all)\n", id, o.dataset)
			sayNotReplayed()
			return ExitError
		}
	}
	if len(cases) == 0 {
		fmt.Fprintf(stderr, "reprise ci: no case in %s matches the selection\n", o.dataset)
		sayNotReplayed()
		return ExitError
	}
	if Factories == nil {
		fmt.Fprintln(stderr, "reprise ci: this binary has no collector components")
		return ExitError
	}

	// Ctrl-C or SIGTERM ends the runs under way (their commands' process groups, their
	// harnesses), marks the cases not run, and still writes the reports.
	ctx, stopSignals := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stopSignals()
	start := time.Now()
	progress := newProgress(stderr, len(cases))
	results := make([]caseResult, len(cases))
	work := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < o.jobs; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				if ctx.Err() != nil {
					results[i] = caseResult{CaseID: cases[i].CaseID, AgentName: cases[i].AgentName, Outcome: outcomeError,
						Message: "not run: " + errInterrupted.Error(), Failing: []casediff.Finding{}}
				} else {
					results[i] = replayCase(ctx, &o, policy, cases[i])
				}
				progress.done(results[i])
			}
		}()
	}
	for i := range cases {
		work <- i
	}
	close(work)
	wg.Wait()

	rep := newCIReport(o.dataset, results, time.Since(start))
	if err := rep.write(&o); err != nil {
		fmt.Fprintln(stderr, "reprise ci:", err)
		return ExitError
	}
	progress.summary(rep)
	sayNotReplayed()
	switch {
	case rep.Errors > 0:
		return ExitError
	case rep.Failed > 0:
		return ExitChanged
	}
	return ExitOK
}

// Outcome of one case.
const (
	outcomePassed = "passed"
	outcomeFailed = "failed" // the run regressed: a failing finding, a failed assertion, a quarantined run or no run at all
	outcomeError  = "error"  // the harness could not replay it (infrastructure)
)

// errInterrupted ends the runs of a reprise ci that got Ctrl-C or SIGTERM.
var errInterrupted = errors.New("reprise ci was interrupted")

// caseResult is what `reprise ci` found for one recorded case.
type caseResult struct {
	CaseID     string             `json:"case_id"`
	AgentName  string             `json:"agent_name,omitempty"`
	Outcome    string             `json:"outcome"`
	Message    string             `json:"message,omitempty"`
	DurationMS int64              `json:"duration_ms"`
	ExitCode   int                `json:"exit_code"`
	NewCaseID  string             `json:"new_case_id,omitempty"`
	OtherRuns  []string           `json:"other_runs,omitempty"` // runs the command also emitted, not compared
	Failing    []casediff.Finding `json:"failing"`
	// ReplayMisses are the requests of the run the replay server refused (replay_miss), those
	// a policy allows included.
	ReplayMisses []casediff.Finding `json:"replay_misses,omitempty"`
	Assertions   []assertionResult  `json:"assertions,omitempty"`
	Diff         *casediff.Report   `json:"diff,omitempty"`
	Stdout       string             `json:"stdout,omitempty"`
	Stderr       string             `json:"stderr,omitempty"`
}

// judge decides the outcome of a case from the diff, the requests the replay server refused
// (misses, replay_miss findings), the assertions and the command's exit.
func judge(r *caseResult, recorded, replayed *replaycase.Case, policy Policy, misses []casediff.Finding) {
	r.ReplayMisses = misses
	var failingMisses []casediff.Finding
	for _, f := range misses {
		if policy.fails(recorded.CaseID, f) {
			failingMisses = append(failingMisses, f)
		}
	}
	if replayed == nil {
		r.Outcome = outcomeFailed
		r.Message = "the command emitted no agent run (is its OpenTelemetry SDK exporting to OTEL_EXPORTER_OTLP_ENDPOINT?)"
		if r.ExitCode != 0 {
			r.Message = fmt.Sprintf("the command exited %d and emitted no agent run", r.ExitCode)
		}
		r.Failing = append([]casediff.Finding{}, failingMisses...)
		if len(failingMisses) > 0 {
			r.Message += fmt.Sprintf("; %d findings: %s", len(failingMisses), replayMiss)
		}
		return
	}
	r.NewCaseID = replayed.CaseID
	d := casediff.Compare(recorded, replayed)
	r.Diff = &d
	r.Failing = []casediff.Finding{}
	for _, f := range d.Findings {
		if policy.fails(recorded.CaseID, f) {
			r.Failing = append(r.Failing, f)
		}
	}
	// After the diff's findings: the report lists them by decision point, replay last.
	r.Failing = append(r.Failing, failingMisses...)
	r.Assertions = evaluateAssertions(recorded, replayed)
	var why []string
	if len(r.Failing) > 0 {
		types := map[casediff.FindingType]bool{}
		var names []string
		for _, f := range r.Failing {
			if !types[f.Type] {
				types[f.Type] = true
				names = append(names, string(f.Type))
			}
		}
		why = append(why, fmt.Sprintf("%d findings: %s", len(r.Failing), strings.Join(names, ", ")))
	}
	for _, a := range r.Assertions {
		if a.Passed != nil && !*a.Passed {
			why = append(why, "assertion "+a.Name+" failed")
		}
	}
	// The diff compares what the replayed run recorded; a run the processor quarantined was not
	// recorded whole (a count that cannot be right, content cut or missing, a secret found), so
	// a diff without a failing finding does not show that it behaved like the recording.
	if recorded.Status == replaycase.StatusAccepted && replayed.Status != replaycase.StatusAccepted {
		codes := make([]string, 0, len(replayed.Reasons))
		for _, rs := range replayed.Reasons {
			if !slices.Contains(codes, rs.Code) {
				codes = append(codes, rs.Code)
			}
		}
		why = append(why, fmt.Sprintf("the replayed run was quarantined (%s), the recording was not", strings.Join(codes, ", ")))
	}
	if r.ExitCode != 0 {
		why = append(why, fmt.Sprintf("the command exited %d", r.ExitCode))
	}
	r.Outcome, r.Message = outcomePassed, strings.Join(why, "; ")
	if len(why) > 0 {
		r.Outcome = outcomeFailed
	}
	// A policy that gates on cost passes a run whose cost could not be compared: say so, or
	// the pass would read as "the cost did not change".
	costGate := casediff.Finding{Type: casediff.CostChanged, PathA: "cost.total_usd", PathB: "cost.total_usd"}
	if note := casediff.CostNotCompared(recorded.Cost, replayed.Cost); note != "" && policy.fails(recorded.CaseID, costGate) {
		r.Message = strings.TrimPrefix(r.Message+"; "+note, "; ")
	}
}

// someIDs lists the first ten case ids of ids in order, and how many more there are.
func someIDs(ids map[string]bool) string {
	sorted := slices.Sorted(maps.Keys(ids))
	if len(sorted) > 10 {
		return fmt.Sprintf("%s and %d more", strings.Join(sorted[:10], ", "), len(sorted)-10)
	}
	return strings.Join(sorted, ", ")
}

// tail keeps the end of a command's output for the report.
func tail(s string) string {
	const keep = 4000
	if len(s) > keep {
		return "…" + s[len(s)-keep:]
	}
	return s
}
