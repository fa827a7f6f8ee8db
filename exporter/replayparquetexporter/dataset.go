package replayparquetexporter

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/google/uuid"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/reprise-dev/reprise/exporter/replayparquetexporter/internal/metadata"
	"github.com/reprise-dev/reprise/replaycase"
)

// The three datasets under the root. The schema of cases/ and quarantine/ is the case model
// itself (replaycase.Case, whose parquet tags are the on-disk schema); steps/ has StepRow.
const (
	datasetCases      = "cases"
	datasetSteps      = "steps"
	datasetQuarantine = "quarantine"
)

// StepRow is one row of steps/: one LLM call, tool execution, retrieval or embedding of an
// accepted case, with the case it belongs to.
type StepRow struct {
	CaseID  string `json:"case_id" parquet:"case_id"`
	TraceID string `json:"trace_id" parquet:"trace_id"`
	replaycase.Step
}

// SchemaVersionKey is the footer key/value entry that names the schema of every file.
const SchemaVersionKey = "replaycase.schema_version"

var codecs = map[string]compress.Codec{
	"zstd":   &parquet.Zstd,
	"snappy": &parquet.Snappy,
	"gzip":   &parquet.Gzip,
	"none":   &parquet.Uncompressed,
}

// statsColumns are the string columns, by leaf name, that keep min/max statistics: short
// identifiers and labels a reader may filter on. Free text (messages, arguments, results,
// documents, raw spans) gets none: parquet-go writes untruncated min/max values, which makes a
// file with a large value several times larger and unreadable for arrow (../shared notes).
var statsColumns = map[string]bool{
	"case_id": true, "trace_id": true, "span_id": true, "parent_span_id": true, "root_span_id": true,
	"schema_version": true, "adapter_version": true, "status": true, "closed_by": true, "code": true,
	"service_name": true, "service_version": true, "agent_name": true, "conversation_id": true,
	"kind": true, "operation": true, "provider": true, "request_model": true, "response_model": true,
	"role": true, "type": true, "finish_reason": true, "response_id": true, "data_source": true,
}

type datasets struct {
	root, staging string
	cfg           *Config
	telemetry     *metadata.TelemetryBuilder
	caseOptions   []parquet.WriterOption
	stepOptions   []parquet.WriterOption
}

func newDatasets(root, staging string, cfg *Config, tb *metadata.TelemetryBuilder) *datasets {
	return &datasets{
		root: root, staging: staging, cfg: cfg, telemetry: tb,
		caseOptions: writerOptions(cfg, parquet.SchemaOf(replaycase.Case{})),
		stepOptions: writerOptions(cfg, parquet.SchemaOf(StepRow{})),
	}
}

// writerOptions is the reader-compatibility profile: V1 data pages, PLAIN byte arrays (no
// DELTA_LENGTH_BYTE_ARRAY, which older Spark, Velox and Iceberg readers lack), microsecond
// timestamps (in the tags), no statistics on free text, a bloom filter on case_id, and the
// schema version in the footer.
func writerOptions(cfg *Config, schema *parquet.Schema) []parquet.WriterOption {
	opts := []parquet.WriterOption{
		schema,
		parquet.Compression(codecs[cfg.Compression]),
		parquet.DataPageVersion(1),
		parquet.DefaultEncodingFor(parquet.ByteArray, &parquet.Plain),
		parquet.MaxRowsPerRowGroup(int64(cfg.RowGroupRows)),
		parquet.CreatedBy("reprise replay_parquet", replaycase.SchemaVersion, ""),
		parquet.KeyValueMetadata(SchemaVersionKey, replaycase.SchemaVersion),
		parquet.BloomFilters(parquet.SplitBlockFilter(10, "case_id")),
	}
	for _, path := range schema.Columns() {
		leaf, ok := schema.Lookup(path...)
		if !ok || leaf.Node.Type().Kind() != parquet.ByteArray || statsColumns[path[len(path)-1]] {
			continue
		}
		opts = append(opts, parquet.SkipPageStatistics(path...), parquet.SkipPageBounds(path...))
	}
	return opts
}

// write publishes one batch: accepted cases to cases/ and their steps to steps/, quarantined
// cases to quarantine/, each partitioned by the UTC day the case started.
func (d *datasets) write(ctx context.Context, cases []*replaycase.Case) error {
	sort.SliceStable(cases, func(i, j int) bool { return cases[i].StartTime.Before(cases[j].StartTime) })
	accepted, quarantined := map[string][]replaycase.Case{}, map[string][]replaycase.Case{}
	steps := map[string][]StepRow{}
	for _, c := range cases {
		dt := partition(c)
		if c.Status != replaycase.StatusAccepted {
			quarantined[dt] = append(quarantined[dt], *c)
			continue
		}
		accepted[dt] = append(accepted[dt], *c)
		for _, st := range c.Steps {
			steps[dt] = append(steps[dt], StepRow{CaseID: c.CaseID, TraceID: c.Provenance.TraceID, Step: st})
		}
	}
	for _, dt := range sortedKeys(accepted) {
		if err := writeFiles(ctx, d, datasetCases, dt, accepted[dt], d.caseOptions); err != nil {
			return err
		}
		if err := writeFiles(ctx, d, datasetSteps, dt, steps[dt], d.stepOptions); err != nil {
			return err
		}
	}
	for _, dt := range sortedKeys(quarantined) {
		if err := writeFiles(ctx, d, datasetQuarantine, dt, quarantined[dt], d.caseOptions); err != nil {
			return err
		}
	}
	return nil
}

// partition is the dt=YYYY-MM-DD value of a case: the UTC day it started.
func partition(c *replaycase.Case) string {
	t := c.StartTime
	if t.IsZero() {
		t = time.Now()
	}
	return t.UTC().Format(time.DateOnly)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// writeFiles writes rows as files of at most max_rows_per_file rows.
func writeFiles[T any](ctx context.Context, d *datasets, dataset, dt string, rows []T, opts []parquet.WriterOption) error {
	for len(rows) > 0 {
		n := min(len(rows), d.cfg.MaxRowsPerFile)
		if err := writeFile(ctx, d, dataset, dt, rows[:n], opts); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}

// writeFile writes one complete file in the staging directory, syncs it, and renames it into
// root/dataset/dt=…/. A reader sees the whole file or nothing. File names are UUIDv7: unique
// across collectors and restarts, and sorted by creation time.
func writeFile[T any](ctx context.Context, d *datasets, dataset, dt string, rows []T, opts []parquet.WriterOption) error {
	id, err := uuid.NewV7()
	if err != nil {
		return err
	}
	name := fmt.Sprintf("part-%s.%s.parquet", id, d.cfg.Compression)
	tmp := filepath.Join(d.staging, dataset+"-"+name+".tmp")
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	published := false
	defer func() {
		if !published {
			f.Close()
			os.Remove(tmp)
		}
	}()
	w := parquet.NewGenericWriter[T](f, opts...)
	if _, err := w.Write(rows); err != nil {
		return fmt.Errorf("writing %s: %w", dataset, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", dataset, err)
	}
	if err := f.Sync(); err != nil {
		return err
	}
	info, err := f.Stat()
	if err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	dir := filepath.Join(d.root, dataset, "dt="+dt)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		return err
	}
	published = true
	if err := syncDir(dir); err != nil {
		return err
	}
	attrs := metric.WithAttributes(attribute.String("dataset", dataset))
	d.telemetry.ExporterReplayParquetFilesWritten.Add(ctx, 1, attrs)
	d.telemetry.ExporterReplayParquetRowsWritten.Add(ctx, int64(len(rows)), attrs)
	d.telemetry.ExporterReplayParquetBytesWritten.Add(ctx, info.Size(), attrs)
	return nil
}

// syncDir makes a rename durable.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
