package cli

import (
	"cmp"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/reprise-dev/reprise/replaycase"
)

func runShow(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("show", "usage: reprise show CASE [--dataset DIR] [--width N]\n  CASE: a case id (or unique prefix) in the dataset, or a case file (.json, .parquet)")
	dataset := fs.String("dataset", defaultDataset, "dataset root the case id is looked up in")
	width := fs.Int("width", 100, "truncate long values to this many characters")
	pos, _, err := parseInterleaved(fs, args)
	if err != nil {
		return usageError(stdout, stderr, fs, err)
	}
	if len(pos) != 1 {
		return usageError(stdout, stderr, fs, fmt.Errorf("want one case, got %d", len(pos)))
	}
	// truncate keeps n-1 characters and an ellipsis, and only when n > 3: a smaller width
	// would silently print every value in full.
	if *width < 4 {
		return usageError(stdout, stderr, fs, fmt.Errorf("--width %d: want at least 4", *width))
	}
	c, err := loadCase(pos[0], *dataset)
	if err != nil {
		fmt.Fprintln(stderr, "reprise show:", err)
		return ExitError
	}
	writeTimeline(stdout, c, *width)
	return ExitOK
}

// writeTimeline prints a case as a person reads a run: a header, each step with its offset
// from the start, duration, model, tokens, tool call and result, then the answer and, for a
// quarantined case, why.
func writeTimeline(w io.Writer, c *replaycase.Case, width int) {
	clip := func(s string) string { return truncate(s, width) }
	fmt.Fprintf(w, "case %s  %s  %s  (closed by %s)\n", c.CaseID, c.AgentName, c.Status, c.ClosedBy)
	fmt.Fprintf(w, "  started %s, took %s, %d steps, %d tokens (in %d, out %d), service %s, trace %s\n",
		c.StartTime.UTC().Format(time.RFC3339), duration(c.StartTime, c.EndTime), len(c.Steps),
		c.Usage.TotalTokens, c.Usage.InputTokens, c.Usage.OutputTokens, c.Provenance.ServiceName, c.Provenance.TraceID)
	if from, edit, ok := replaycase.MutationOf(c.Metadata); ok {
		fmt.Fprintf(w, "  mutation of case %s, not a recorded run: %s\n", from, edit)
	}
	if c.Cost != nil {
		fmt.Fprintf(w, "  cost: %s\n", costText(c.Cost))
	}
	if len(c.InputMessages) > 0 {
		last := c.InputMessages[len(c.InputMessages)-1]
		fmt.Fprintf(w, "  asked: %s\n", clip(messageText(last)))
	}
	for _, st := range c.Steps {
		fmt.Fprintf(w, "  %8s %7s  #%d %-9s %s", "+"+duration(c.StartTime, st.StartTime), duration(st.StartTime, st.EndTime), st.Index, st.Kind, st.Name)
		switch st.Kind {
		case replaycase.StepLLM:
			fmt.Fprintf(w, "  model %s, %d→%d tokens", cmp.Or(st.ModelConfig.ResponseModel, st.ModelConfig.RequestModel), st.Usage.InputTokens, st.Usage.OutputTokens)
			if st.Cost != nil {
				fmt.Fprintf(w, ", %s", costText(st.Cost))
			}
			for _, m := range st.OutputMessages {
				for _, p := range m.Parts {
					switch p.Type {
					case "tool_call":
						fmt.Fprintf(w, "\n%20s→ calls %s(%s)", "", p.Name, clip(p.Arguments))
					case "text":
						fmt.Fprintf(w, "\n%20s→ %s", "", clip(p.Content))
					}
				}
			}
		case replaycase.StepTool:
			if tc := st.ToolCall; tc != nil {
				fmt.Fprintf(w, "  %s(%s)\n%20s→ %s", tc.Name, clip(tc.Arguments), "", clip(cmp.Or(errorText(tc.Error), tc.Result)))
			}
		case replaycase.StepRetrieval:
			if r := st.Retrieval; r != nil {
				ids := make([]string, len(r.Documents))
				for i, d := range r.Documents {
					ids[i] = d.ID
				}
				fmt.Fprintf(w, "  %q from %s → %s", clip(r.Query), r.DataSource, clip(strings.Join(ids, ", ")))
			}
		}
		// A tool step's error is usually its call's, printed above as its outcome.
		if st.Status == replaycase.StepError && (st.ToolCall == nil || st.ToolCall.Error != st.Error) {
			fmt.Fprintf(w, "\n%20s! error: %s", "", clip(st.Error))
		}
		fmt.Fprintln(w)
	}
	if c.FinalOutput != nil {
		fmt.Fprintf(w, "  answer: %s\n", clip(messageText(*c.FinalOutput)))
	}
	for _, r := range c.Reasons {
		fmt.Fprintf(w, "  reason: %s  %s\n", r.Code, clip(r.Detail))
	}
}

func messageText(m replaycase.Message) string {
	var parts []string
	for _, p := range m.Parts {
		if p.Content != "" {
			parts = append(parts, p.Content)
		}
	}
	return strings.Join(parts, " ")
}

func errorText(e string) string {
	if e == "" {
		return ""
	}
	return "error: " + e
}

func duration(from, to time.Time) string {
	if from.IsZero() || to.IsZero() {
		return "?"
	}
	return to.Sub(from).Round(time.Millisecond).String()
}

// truncate shortens s to n characters on one line.
func truncate(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); n > 3 && len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
