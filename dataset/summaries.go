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
}

// SummaryOf is the summary of a case read in full.
func SummaryOf(c *replaycase.Case) *CaseSummary {
	return &CaseSummary{c.CaseID, c.SchemaVersion, c.Status, c.Reasons, c.ClosedBy, c.Provenance, c.StartTime, c.EndTime, c.AgentName, c.ConversationID, c.Usage}
}

// ReadSummaries reads the summaries of several rows of one cases/ or quarantine/ file in one
// pass (see ReadRows).
func ReadSummaries(path string, rows []int64) (map[int64]*CaseSummary, error) {
	f, df, err := open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readRowsOf[CaseSummary](df, path, rows)
}

// ReadSummaries reads summaries of a listed file (see ReadSummaries).
func (l *ObjectLister) ReadSummaries(ctx context.Context, path string, rows []int64) (map[int64]*CaseSummary, error) {
	df, err := l.open(ctx, path)
	if err != nil {
		return nil, err
	}
	return readRowsOf[CaseSummary](df, path, rows)
}
