package dataset_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	. "github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/replaycase"
)

// scannedRow is a ReplayIndexRow copied out of the scanner's buffers.
type scannedRow struct {
	row                   int64
	caseID, status, agent string
	start                 int64
	kinds, callSiteIDs    []string
	indexes               []int64
	callSiteFields        [][]string
}

// edgeCases are cases whose index columns take every shape: no steps, steps of other kinds,
// model calls without a call-site id or fields, several fields, no agent name, and enough
// rows to span row groups and pages.
func edgeCases() []*replaycase.Case {
	start := time.Date(2026, 11, 30, 12, 0, 0, 123456000, time.UTC)
	var out []*replaycase.Case
	for i := range 45 {
		c := &replaycase.Case{CaseID: fmt.Sprintf("%032x", 1000+i), SchemaVersion: replaycase.SchemaVersion, Status: replaycase.StatusAccepted,
			StartTime: start.Add(time.Duration(i) * time.Second), EndTime: start.Add(time.Hour)}
		if i%3 != 0 {
			c.AgentName = fmt.Sprintf("agent-%d", i%4)
		}
		for j := range i % 5 {
			st := replaycase.Step{Index: j, Kind: replaycase.StepLLM, StartTime: c.StartTime}
			switch j {
			case 1:
				st.Kind = replaycase.StepTool
				st.ToolCall = &replaycase.ToolCall{ID: "t", Name: "lookup"}
			case 2:
				// a model call recorded without its call-site id (older files)
			default:
				st.CallSiteID = fmt.Sprintf("cs_%032x", i*10+j)
				st.CallSiteFields = []string{"model", "messages", fmt.Sprintf("f%d", i%2)}[:1+(i+j)%3]
			}
			c.Steps = append(c.Steps, st)
		}
		out = append(out, c)
	}
	return out
}

// The column scan reads the same values as the row reader, row by row, over real cases and
// the edge shapes, across row groups.
func TestScanReplayIndexAgreesWithTheRowReader(t *testing.T) {
	w := newWriter(t)
	_, err := w.Write(append(fixtureCases(t), edgeCases()...))
	require.NoError(t, err)
	checked := 0
	for _, path := range caseFiles(t, w.Root()) {
		rows, err := ReadCases(path)
		require.NoError(t, err)
		var want []scannedRow
		for i, c := range rows {
			r := scannedRow{row: int64(i), caseID: c.CaseID, status: string(c.Status), agent: c.AgentName, start: c.StartTime.UnixNano()}
			for _, st := range c.Steps {
				r.kinds = append(r.kinds, string(st.Kind))
				r.indexes = append(r.indexes, int64(st.Index))
				r.callSiteIDs = append(r.callSiteIDs, st.CallSiteID)
				var fields []string // nil when empty, as the scan's copy is
				fields = append(fields, st.CallSiteFields...)
				r.callSiteFields = append(r.callSiteFields, fields)
			}
			want = append(want, r)
		}
		var got []scannedRow
		require.NoError(t, ScanReplayIndex(path, func(row int64, x *ReplayIndexRow) error {
			r := scannedRow{row: row, caseID: string(x.CaseID), status: string(x.Status), agent: string(x.AgentName), start: x.StartTime}
			for _, st := range x.Steps {
				r.kinds = append(r.kinds, string(st.Kind))
				r.indexes = append(r.indexes, st.Index)
				r.callSiteIDs = append(r.callSiteIDs, string(st.CallSiteID))
				var fields []string
				for _, f := range st.CallSiteFields {
					fields = append(fields, string(f))
				}
				r.callSiteFields = append(r.callSiteFields, fields)
			}
			got = append(got, r)
			return nil
		}))
		require.Equal(t, want, got, path)
		checked += len(got)
	}
	assert.Equal(t, 48, checked)
}

// An error from the callback stops the scan and names the row.
func TestScanReplayIndexStopsOnError(t *testing.T) {
	w := newWriter(t)
	_, err := w.Write(edgeCases())
	require.NoError(t, err)
	files, err := filepath.Glob(filepath.Join(w.Root(), Cases, "*", "*.parquet"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	seen := 0
	err = ScanReplayIndex(files[0], func(row int64, _ *ReplayIndexRow) error {
		seen++
		if row == 12 {
			return fmt.Errorf("stop")
		}
		return nil
	})
	assert.ErrorContains(t, err, "row 12: stop")
	assert.Equal(t, 13, seen)
}
