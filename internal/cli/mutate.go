package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"reflect"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/replaycase"
)

// mutation is one counterfactual edit of a step.
type mutation struct {
	Step  int    `json:"step"`
	Edit  string `json:"edit"`  // response, tool_result or tool_error
	Value string `json:"value"` // the JSON (response, tool_result) or text (tool_error) given
}

// runMutate writes a new case: the named case with one step edited, a new id, derived_from
// the original and the edit recorded in its metadata. Replaying it serves the edited step.
func runMutate(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("mutate", "usage: reprise mutate CASE --step N (--response JSON | --tool-result JSON | --tool-error TEXT) [--dataset DIR] [--out DIR]")
	root := fs.String("dataset", defaultDataset, "dataset root the case is looked up in")
	out := fs.String("out", "", "dataset root to write the new case into (default: --dataset)")
	step := fs.Int("step", 0, "index of the step to edit, as reprise show numbers them (required)")
	response := fs.String("response", "", "new model output of an LLM step: a JSON string (the text), a message or an array of messages")
	toolResult := fs.String("tool-result", "", "new result of a tool step, JSON")
	toolError := fs.String("tool-error", "", "make a tool step fail with this error text")
	pos, _, err := parseInterleaved(fs, args)
	if err != nil {
		return usageError(stdout, stderr, fs, err)
	}
	stepGiven := false // a default could not tell "--step -1" from no --step
	fs.Visit(func(f *flag.Flag) { stepGiven = stepGiven || f.Name == "step" })
	var m mutation
	given := 0
	for edit, v := range map[string]string{"response": *response, "tool_result": *toolResult, "tool_error": *toolError} {
		if v != "" {
			m, given = mutation{Step: *step, Edit: edit, Value: v}, given+1
		}
	}
	switch {
	case len(pos) != 1:
		return usageError(stdout, stderr, fs, fmt.Errorf("want one case, got %d", len(pos)))
	case !stepGiven:
		return usageError(stdout, stderr, fs, errors.New("--step is required"))
	case *step < 0:
		return usageError(stdout, stderr, fs, fmt.Errorf("--step %d: steps are numbered from 0, as reprise show numbers them", *step))
	case given != 1:
		return usageError(stdout, stderr, fs, errors.New("give exactly one of --response, --tool-result, --tool-error"))
	}
	if *out == "" {
		*out = *root
	}
	orig, err := loadCase(pos[0], *root)
	if err == nil {
		// Repaired as the dataset writer repairs (a case file or a row written before the writer
		// did may hold invalid UTF-8, and so may --tool-error's text), before the copy through
		// JSON that makes the new case: JSON puts U+FFFD for each invalid byte instead of each
		// sequence, and keeps one entry of two map keys that become the same. The new case is
		// then what the writer stores, so a repeat of the edit compares equal to its row.
		if n := dataset.RepairUTF8(orig) + dataset.RepairUTF8(&m); n > 0 {
			fmt.Fprintf(stderr, "warning: %d strings of case %s and the edit were not valid UTF-8; the new case holds U+FFFD in place of each invalid byte sequence\n", n, orig.CaseID)
		}
		var derived *replaycase.Case
		if err = scrubEdit(&m); err == nil {
			derived, err = applyMutation(orig, m)
		}
		if err == nil {
			err = writeDerived(derived, *out, stdout, stderr)
		}
	}
	if err != nil {
		fmt.Fprintln(stderr, "reprise mutate:", err)
		return ExitError
	}
	return ExitOK
}

// writeDerived writes c into the dataset at root and prints its id, which the dataset then
// holds. The same edit of the same case is the same case: written once, and a repeat says on
// stderr that it was already there. The id depends only on the original's id and the edit, so
// after the original's row changed (a quarantined case re-driven, a newer import) the same
// edit gives a case that differs from the one stored: that is written again, its row then the
// current one, as the re-driven row is the original's.
func writeDerived(c *replaycase.Case, root string, stdout, stderr io.Writer) error {
	stale := false
	written, err := writeCases(root, []*replaycase.Case{c}, func(c *replaycase.Case) (bool, error) {
		stored, err := loadCase(c.CaseID, root)
		if err == nil {
			// Compared in the form c was made in: a copy through JSON, which has no empty
			// lists where the dataset's reader makes them.
			stored, err = copyCase(stored)
		}
		stale = err == nil && !reflect.DeepEqual(stored, c)
		return stale, err
	}, stderr)
	if err != nil {
		return err
	}
	from := c.Metadata[replaycase.MetaDerivedFrom]
	switch {
	case len(written) == 0:
		fmt.Fprintf(stderr, "reprise mutate: case %s is already in %s (the same edit of case %s); not written again\n", c.CaseID, root, from)
	case stale:
		fmt.Fprintf(stderr, "reprise mutate: case %s in %s differs from this edit of case %s as it is now; written again as its current row\n", c.CaseID, root, from)
	}
	fmt.Fprintf(stdout, "%s\n", c.CaseID)
	return nil
}

// applyMutation returns a copy of orig with the edit applied, its new id and its provenance.
func applyMutation(orig *replaycase.Case, m mutation) (*replaycase.Case, error) {
	c, err := copyCase(orig)
	if err != nil {
		return nil, err
	}
	st := stepAt(c, m.Step)
	if st == nil {
		return nil, fmt.Errorf("case %s has no step %d (it has %d steps)", orig.CaseID, m.Step, len(c.Steps))
	}
	switch m.Edit {
	case "response":
		if st.Kind != replaycase.StepLLM {
			return nil, fmt.Errorf("--response edits an llm step; step %d is a %s step", m.Step, st.Kind)
		}
		msgs, err := parseResponse(m.Value)
		if err != nil {
			return nil, err
		}
		answered := isAnswerOf(c, st)
		st.FinishReasons = setFinishReasons(st, msgs) // before the recorded messages are replaced
		st.OutputMessages = msgs
		if answered {
			first := msgs[0]
			c.FinalOutput = &first
		}
	case "tool_result", "tool_error":
		if st.Kind != replaycase.StepTool || st.ToolCall == nil {
			return nil, fmt.Errorf("--%s edits a tool step; step %d is a %s step", map[string]string{"tool_result": "tool-result", "tool_error": "tool-error"}[m.Edit], m.Step, st.Kind)
		}
		result, errText := "", m.Value
		st.Status, st.Error = replaycase.StepError, m.Value
		if m.Edit == "tool_result" {
			if !json.Valid([]byte(m.Value)) {
				return nil, fmt.Errorf("--tool-result is not JSON: %q", m.Value)
			}
			result, errText = m.Value, ""
			st.Status, st.Error = replaycase.StepOK, ""
		}
		st.ToolCall.Result, st.ToolCall.Error = result, errText
		// The replay extension serves tool results from the case's tool calls.
		for i := range c.ToolCalls {
			tc := &c.ToolCalls[i]
			if (tc.SpanID != "" && tc.SpanID == st.SpanID) || (tc.SpanID == "" && tc.ID != "" && tc.ID == st.ToolCall.ID) {
				tc.Result, tc.Error = result, errText
			}
		}
	}
	record, _ := json.Marshal(m)
	h := sha256.Sum256(append([]byte(orig.CaseID+"\x00"), record...))
	c.CaseID = replaycase.ID(orig.Provenance.TraceID, "mutation/"+hex.EncodeToString(h[:16]))
	if c.Metadata == nil {
		c.Metadata = map[string]string{}
	}
	c.Metadata[replaycase.MetaDerivedFrom], c.Metadata[replaycase.MetaMutation] = orig.CaseID, string(record)
	// The raw telemetry is the original run's: re-driving it would rebuild the original case.
	c.RawSpans, c.RawEvents = nil, nil
	return c, nil
}

// isAnswerOf says whether the case's final_output is step st's answer, by the rule that built
// it (normalize's summarize, docs/case-model.md): the root agent's last output message, else
// the first output message of the LLM step that ended last (of two that ended together, the
// later one). The case does not keep the root agent's output apart, so st must be that last
// step and final_output its first message (or absent, when st had none). A final_output that
// is not is the agent's own answer, recorded on its span: the edit does not rewrite it, since
// what the agent would have made of the new response is not recorded. One equal to the step's
// message is the step's, whether or not the agent passed it through.
func isAnswerOf(c *replaycase.Case, st *replaycase.Step) bool {
	switch {
	case c.LastLLMStep() != st:
		return false
	case len(st.OutputMessages) == 0:
		return c.FinalOutput == nil
	}
	return c.FinalOutput != nil && reflect.DeepEqual(*c.FinalOutput, st.OutputMessages[0])
}

// copyCase is a deep copy (through JSON, which carries every column).
func copyCase(c *replaycase.Case) (*replaycase.Case, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	var out replaycase.Case
	return &out, json.Unmarshal(b, &out)
}

func stepAt(c *replaycase.Case, index int) *replaycase.Step {
	for i := range c.Steps {
		if c.Steps[i].Index == index {
			return &c.Steps[i]
		}
	}
	return nil
}

// parseResponse reads a model output: a JSON string (one assistant text message), one
// message, or an array of messages, in the dataset's parts form.
func parseResponse(s string) ([]replaycase.Message, error) {
	// JSON null decodes into a string as no text at all: it is no answer, not an empty one.
	var text *string
	if json.Unmarshal([]byte(s), &text) == nil && text != nil {
		return []replaycase.Message{{Role: "assistant", Parts: []replaycase.Part{{Type: "text", Content: *text}}}}, nil
	}
	var msgs []replaycase.Message
	if err := json.Unmarshal([]byte(s), &msgs); err != nil {
		var one replaycase.Message
		if err := json.Unmarshal([]byte(s), &one); err != nil {
			return nil, fmt.Errorf("--response is not a JSON string, message or array of messages: %w", err)
		}
		msgs = []replaycase.Message{one}
	}
	// A model call answers something: an edit to no message would replay an empty response.
	if len(msgs) == 0 {
		return nil, fmt.Errorf("--response %s holds no message", s)
	}
	for i, m := range msgs {
		if m.Role == "" || len(m.Parts) == 0 {
			return nil, fmt.Errorf("--response message %d needs a role and at least one part", i)
		}
	}
	return msgs, nil
}
