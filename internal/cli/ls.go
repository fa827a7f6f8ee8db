package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/reprise-dev/reprise/replaycase"
)

// selection is the case filter shared by `reprise ls` and `reprise ci`.
type selection struct {
	status, agent string
	ids           []string
	metadata      map[string]string
	since         time.Time
}

func (s *selection) register(fs *flag.FlagSet, defaultStatus string) {
	fs.StringVar(&s.status, "status", defaultStatus, "accepted, quarantined or all")
	fs.StringVar(&s.agent, "agent", "", "only cases of this agent name")
	repeatableFunc(fs, "case", "only this case id", func(v string) error {
		// An empty id is a prefix of every id: it would select the whole dataset (e.g. --case
		// "$id" after a command that printed nothing).
		if strings.TrimSpace(v) == "" {
			return errors.New("empty case id")
		}
		s.ids = append(s.ids, v)
		return nil
	})
	repeatableFunc(fs, "metadata", "only cases whose metadata KEY=VALUE", func(v string) error {
		k, val, ok := strings.Cut(v, "=")
		if !ok {
			return fmt.Errorf("want KEY=VALUE, got %q", v)
		}
		if s.metadata == nil {
			s.metadata = map[string]string{}
		}
		s.metadata[k] = val
		return nil
	})
	fs.Func("since", "only cases that started at or after this time (RFC 3339 or a date)", func(v string) error {
		t, err := parseTime(v)
		s.since = t
		return err
	})
}

func (s *selection) validate() error {
	switch s.status {
	case "accepted", "quarantined", "all":
		return nil
	}
	return fmt.Errorf("--status %q: want accepted, quarantined or all", s.status)
}

func (s *selection) keep(c *replaycase.Case) bool {
	if s.status != "all" && string(c.Status) != s.status {
		return false
	}
	if s.agent != "" && c.AgentName != s.agent {
		return false
	}
	// An id or a prefix of one; a case id is a prefix of itself.
	if len(s.ids) > 0 && !slices.ContainsFunc(s.ids, func(id string) bool { return strings.HasPrefix(c.CaseID, id) }) {
		return false
	}
	for k, v := range s.metadata {
		if c.Metadata[k] != v {
			return false
		}
	}
	return s.since.IsZero() || !c.StartTime.Before(s.since)
}

func runLs(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("ls", "usage: reprise ls [--dataset DIR] [--status accepted|quarantined|all] [--agent NAME] [--metadata K=V] [--case ID] [--since TIME]")
	dataset := fs.String("dataset", defaultDataset, "dataset root")
	var sel selection
	sel.register(fs, "all")
	pos, _, err := parseInterleaved(fs, args)
	if err == nil && len(pos) > 0 {
		err = fmt.Errorf("unexpected argument %q", pos[0])
	}
	if err == nil {
		err = sel.validate()
	}
	if err != nil {
		return usageError(stdout, stderr, fs, err)
	}
	rows, err := scanDataset(*dataset, func(c *replaycase.Case) (lsRow, bool) {
		if !sel.keep(c) {
			return lsRow{}, false
		}
		return newLsRow(c), true
	})
	if err != nil {
		fmt.Fprintln(stderr, "reprise ls:", err)
		return ExitError
	}
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CASE_ID\tSTARTED\tSTATUS\tAGENT\tSTEPS\tTOKENS\tREASONS\tMUTATION_OF")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\n", r.caseID, r.started.UTC().Format(time.RFC3339), r.status,
			r.agent, r.steps, r.tokens, r.reasons, r.mutationOf)
	}
	if err := tw.Flush(); err != nil {
		return ExitError
	}
	return ExitOK
}

// lsRow is the line `reprise ls` prints for a case: all it keeps of the row while it reads the
// rest of the dataset.
type lsRow struct {
	caseID, status, agent, reasons string
	mutationOf                     string // the original of a case reprise mutate made, else empty
	started                        time.Time
	steps                          int
	tokens                         int64
}

func newLsRow(c *replaycase.Case) lsRow {
	var codes []string // each code once: a case may carry one reason per step
	for _, r := range c.Reasons {
		if !slices.Contains(codes, r.Code) {
			codes = append(codes, r.Code)
		}
	}
	// derived_from alone marks a live run of reprise ci --mode hybrid, not a mutation.
	from, _, mutated := replaycase.MutationOf(c.Metadata)
	if !mutated {
		from = ""
	}
	return lsRow{caseID: c.CaseID, mutationOf: from, status: string(c.Status), agent: c.AgentName, reasons: strings.Join(codes, ","),
		started: c.StartTime, steps: len(c.Steps), tokens: c.Usage.TotalTokens}
}
