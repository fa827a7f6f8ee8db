package dataset_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	. "github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/replaycase"
)

// A tool result sent to the model as a failure (Part.Error, Anthropic's is_error) is the
// optional column input_messages.parts.is_error: true where it failed, NULL elsewhere, read back
// by the row reader and the column reader alike.
func TestToolResultFailureIsAnOptionalColumn(t *testing.T) {
	w := newWriter(t)
	cases := fixtureCases(t)
	marked := 0
	for i := range cases[0].Steps {
		for _, m := range cases[0].Steps[i].InputMessages {
			for k := range m.Parts {
				if m.Parts[k].Type == "tool_call_response" && marked == 0 {
					m.Parts[k].Error = true
					marked++
				}
			}
		}
	}
	require.Equal(t, 1, marked, "the fixture sends a tool result back to the model")
	_, err := w.Write(cases)
	require.NoError(t, err)

	type part struct {
		Type  string `parquet:"type"`
		Error *bool  `parquet:"is_error,optional"`
	}
	type message struct {
		Parts []part `parquet:"parts,list"`
	}
	type row struct {
		CaseID        string    `parquet:"case_id"`
		InputMessages []message `parquet:"input_messages,list"`
	}
	var failed, other int
	for _, file := range tree(t, w.Root()) {
		path := filepath.Join(w.Root(), file)
		switch filepath.Dir(filepath.Dir(file)) {
		case Cases:
			assertReadsAsTheRowReader(t, path)
			got, err := ReadCases(path)
			require.NoError(t, err)
			for _, c := range got {
				if c.CaseID == cases[0].CaseID {
					assert.Equal(t, failedResults(cases[0]), failedResults(&c))
				}
			}
		case Steps:
			rows, err := parquet.ReadFile[row](path)
			require.NoError(t, err)
			for _, r := range rows {
				for _, m := range r.InputMessages {
					for _, p := range m.Parts {
						switch {
						case p.Error != nil:
							assert.True(t, *p.Error)
							assert.Equal(t, "tool_call_response", p.Type)
							failed++
						default:
							other++
						}
					}
				}
			}
		}
	}
	assert.Equal(t, 1, failed)
	assert.Positive(t, other, "NULL where the part is no failed result")
}

// failedResults lists the tool results c's model calls were sent as failures, as "step id".
func failedResults(c *replaycase.Case) []string {
	var out []string
	for _, st := range c.Steps {
		for _, m := range st.InputMessages {
			for _, p := range m.Parts {
				if p.Error {
					out = append(out, fmt.Sprint(st.Index, " ", p.ID))
				}
			}
		}
	}
	return out
}
