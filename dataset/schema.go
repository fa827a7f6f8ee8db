// Package dataset owns the on-disk layout of Reprise's replay datasets: the datasets and their
// row types, the Hive partitioning, the schema version, writing with atomic publish, and
// reading (a light per-file index and one case on demand). The exporter writes through it, the
// replay extension and the future receiver read through it; nothing else names a dataset.
//
// Layout under a root directory:
//
//	<root>/cases/dt=YYYY-MM-DD/part-<uuidv7>.<codec>.parquet       CaseRow: one accepted case per row
//	<root>/steps/dt=YYYY-MM-DD/part-<uuidv7>.<codec>.parquet       StepRow: one step of an accepted case per row
//	<root>/quarantine/dt=YYYY-MM-DD/part-<uuidv7>.<codec>.parquet  QuarantineRow: one quarantined case per row
//	<root>/failed/batch-<sha256 prefix>.otlp.binpb                 a batch that could not be written (dead letter)
//	<staging>/                                                     batches being written; never inside <root>
//
// dt is the UTC day the case started. Readers add it as a DATE column from the directory name;
// it is not stored in the files (a column of the same name would win over the directory in
// Polars and turn it into a string).
//
// A file becomes visible only when it is complete, and a batch's files only together: see
// publish.go, the one place where that rule is enforced.
package dataset

import (
	"time"

	"github.com/reprise-dev/reprise/replaycase"
)

// The datasets under a root. Each is a directory of dt= partitions.
const (
	Cases      = "cases"      // accepted cases, one nested row each (CaseRow)
	Steps      = "steps"      // the steps of accepted cases, one row each (StepRow)
	Quarantine = "quarantine" // quarantined cases, one row each, with their raw spans (QuarantineRow)
	// Failed holds dead-lettered batches: OTLP protobuf files, not Parquet (see deadletter.go).
	Failed = "failed"
)

// SchemaVersion names the schema of every file and row. Later versions only add optional
// columns, so a reader of version N reads files of version N with any later optional column
// ignored; readers refuse files whose footer names a version they do not know.
const SchemaVersion = replaycase.SchemaVersion

// SchemaVersionKey is the footer key/value entry that holds SchemaVersion in every file. The
// same value is in each row's schema_version column, so it can also be filtered on.
const SchemaVersionKey = "replaycase.schema_version"

// CaseRow is one row of cases/: the case model itself, whose parquet tags are the on-disk
// schema (docs/case-model.md documents every column).
type CaseRow = replaycase.Case

// QuarantineRow is one row of quarantine/: the same columns as cases/, status "quarantined",
// at least one reason, and raw_spans / raw_events holding the telemetry for a re-drive.
type QuarantineRow = replaycase.Case

// StepRow is one row of steps/: one LLM call, tool execution, retrieval, embedding or nested
// agent of an accepted case, with the case it belongs to. The step's fields are top-level
// columns; trace_id and the span ids are NULL (merge_steps.go): (case_id, index) is the
// row's key, and the case in cases/ and its step at position index there have them.
type StepRow struct {
	CaseID string `json:"case_id" parquet:"case_id"`
	// TraceID is set only in files written before StepsLayout (NULL since).
	TraceID string `json:"trace_id" parquet:"trace_id,optional"`
	// SchemaVersion is the version of the case the step belongs to.
	SchemaVersion string `json:"schema_version" parquet:"schema_version,optional,dict"`
	replaycase.Step
}

// StepsLayoutKey is the footer key/value entry of steps/ files whose trace_id and span ids
// are NULL (merge_steps.go); in files without it (written before) they hold the ids.
const StepsLayoutKey = "reprise.steps_layout"

// StepsLayout is the value of StepsLayoutKey.
const StepsLayout = "ids-in-cases"

// PartitionKey is the Hive partition directory name.
const PartitionKey = "dt"

// Partition is the dt value of a case: the UTC day it started, or of now when the case has no
// start time or one outside the years 0001 to 9999. Such a year (a row imported from a file of
// another tool) would name a directory such as dt=10000-01-02 or dt=-0005-01-02, which is no
// YYYY-MM-DD date: Polars then reads dt as a string for the whole dataset, and Spark's DATE
// ends at 9999. The row's start_time keeps the time as it is.
func Partition(c *replaycase.Case, now time.Time) string {
	t := c.StartTime.UTC()
	if c.StartTime.IsZero() || t.Year() < 1 || t.Year() > 9999 {
		t = now.UTC()
	}
	return t.Format(time.DateOnly)
}

// DatasetOf is the dataset a case's row goes to: Cases when it is accepted, Quarantine otherwise.
func DatasetOf(c *replaycase.Case) string {
	if c.Status == replaycase.StatusAccepted {
		return Cases
	}
	return Quarantine
}
