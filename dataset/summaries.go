package dataset

import (
	"context"
	"time"

	"github.com/reprise-dev/reprise/replaycase"
)

// CaseSummary is a case without its content (steps, messages, tool calls, raw spans): what a
// listing shows. ReadSummaries decodes only its columns.
type CaseSummary struct {
	CaseID         string                `json:"case_id" parquet:"case_id"`
	SchemaVersion  string                `json:"schema_version" parquet:"schema_version"`
	Status         replaycase.Status     `json:"status" parquet:"status"`
	Reasons        []replaycase.Reason   `json:"reasons" parquet:"reasons,list"`
	ClosedBy       replaycase.CloseCause `json:"closed_by" parquet:"closed_by"`
	Provenance     replaycase.Provenance `json:"provenance" parquet:"provenance"`
	StartTime      time.Time             `json:"start_time" parquet:"start_time,timestamp(microsecond)"`
	EndTime        time.Time             `json:"end_time" parquet:"end_time,timestamp(microsecond)"`
	AgentName      string                `json:"agent_name" parquet:"agent_name,optional"`
	ConversationID string                `json:"conversation_id" parquet:"conversation_id,optional"`
	Usage          replaycase.Usage      `json:"usage" parquet:"usage"`
	// Metadata is read to tell a case `reprise mutate` made (MutationOf); a summary does not
	// show it.
	Metadata map[string]string `json:"-" parquet:"metadata"`
	// MutationOf is the id of the case a mutated case was made from, empty for a recorded run:
	// a mutation keeps the original's agent, status and times, and a listing must not pass it
	// off as a run. Set from Metadata when the summary is made or read.
	MutationOf string `json:"mutation_of,omitempty" parquet:"-"`
}

// SummaryOf is the summary of a case read in full.
func SummaryOf(c *replaycase.Case) *CaseSummary {
	s := &CaseSummary{c.CaseID, c.SchemaVersion, c.Status, c.Reasons, c.ClosedBy, c.Provenance, c.StartTime, c.EndTime, c.AgentName, c.ConversationID, c.Usage, c.Metadata, ""}
	return s.markMutation()
}

// markMutation sets MutationOf from Metadata.
func (s *CaseSummary) markMutation() *CaseSummary {
	if from, _, ok := replaycase.MutationOf(s.Metadata); ok {
		s.MutationOf = from
	}
	return s
}

// markMutations sets MutationOf of summaries read from a file.
func markMutations(sums map[int64]*CaseSummary, err error) (map[int64]*CaseSummary, error) {
	for _, s := range sums {
		s.markMutation()
	}
	return sums, err
}

// ReadSummaries reads the summaries of several rows of one cases/ or quarantine/ file in one
// pass (see ReadRows).
func ReadSummaries(path string, rows []int64) (map[int64]*CaseSummary, error) {
	f, df, err := open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return markMutations(readRowsOf[CaseSummary](df, path, rows))
}

// ReadSummaries reads summaries of a listed file (see ReadSummaries).
func (l *ObjectLister) ReadSummaries(ctx context.Context, path string, rows []int64) (map[int64]*CaseSummary, error) {
	df, err := l.open(ctx, path)
	if err != nil {
		return nil, err
	}
	return markMutations(readRowsOf[CaseSummary](df, path, rows))
}
