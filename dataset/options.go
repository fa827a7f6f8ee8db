package dataset

import (
	"fmt"
	"sort"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
)

var codecs = map[string]compress.Codec{
	"zstd":   &zstdSmallWindow{},
	"snappy": &parquet.Snappy,
	"gzip":   &parquet.Gzip,
	"none":   &parquet.Uncompressed,
}

// Compressions lists the codec names a Writer accepts.
func Compressions() []string {
	names := make([]string, 0, len(codecs))
	for name := range codecs {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// statsColumns are the string columns, by leaf name, that keep min/max statistics: short
// labels a reader may filter on, and case_id. Free text (messages, arguments, results,
// documents, raw spans) gets none: parquet-go writes untruncated min/max values into page
// headers and the footer, which makes a file holding a 6 MB value several times larger and
// unreadable for Arrow (its page-header limit is 4 MiB). Neither do trace and span ids: they
// are random, so the min and max of a row group span almost the whole range and skip nothing,
// and they would cost footer bytes in every file.
var statsColumns = map[string]bool{
	"case_id":        true,
	"schema_version": true, "adapter_version": true, "status": true, "closed_by": true, "code": true,
	"service_name": true, "service_version": true, "agent_name": true, "conversation_id": true,
	"kind": true, "operation": true, "provider": true, "request_model": true, "response_model": true,
	"role": true, "type": true, "finish_reason": true, "response_id": true, "data_source": true,
}

// casePageBytes bounds the pages of cases/ and quarantine/ files and of the case files
// `reprise export` writes (WriteCaseFile), which share their writer profile. A column
// writer holds up to a page of each column uncompressed until it cuts the page, and a case row
// has 245 columns, most of them in its list of steps: up to 245 × 256 KiB (61 MiB) with
// parquet-go's default pages, 245 × 64 KiB (15 MiB) with these. The merge is the largest heap of
// a paced run of scripts/bench-pipeline.sh; measured (docs/benchmarks.md), 64 KiB pages lowered
// the merge's peak heap from 62–63 to 54–59 MiB (go test -run '^$' -bench MergeMemory
// -benchtime 1x -count 3 ./exporter/replayparquetexporter/) and made the dataset 5 % larger
// (scripts/bench-pipeline.sh 5000 1: 0.460× → 0.483× of gzip -6 of the input; zstd compresses each
// page on its own and finds fewer repeats in a smaller one). steps/ keeps 256 KiB: half the
// columns, and smaller pages saved it little memory and cost 10 % of its bytes (one round).
const (
	casePageBytes = 64 << 10
	// maxDictionaryBytes: once a column chunk's dictionary holds more, checked at the end of each
	// page, the chunk's later pages are PLAIN. The dictionary columns hold few distinct values
	// (an agent's tool set, model names, roles), but nothing stops a client from sending a new
	// tool schema with every call, and a dictionary is held in memory, uncompressed, until its
	// chunk is written (a merge counts it in mergeRowGroupBytes). parquet-mr and Arrow fall
	// back the same way, so every reader reads such chunks (TestReadersReadDictionaryAndPlainPagesOfOneColumn).
	maxDictionaryBytes = 1 << 20
	stepPageBytes      = 256 << 10 // parquet-go's default
)

// writerOptions is the reader-compatibility profile: V1 data pages, PLAIN byte arrays (no
// DELTA_LENGTH_BYTE_ARRAY, which older Spark, Velox and Iceberg readers lack), microsecond
// timestamps (in the struct tags), no statistics on free text, a bloom filter on case_id, and
// the schema version in the footer; pages of at most pageBytes.
func writerOptions(codec string, rowGroupRows, pageBytes int, schema *parquet.Schema) ([]parquet.WriterOption, error) {
	c, ok := codecs[codec]
	if !ok {
		return nil, fmt.Errorf("compression must be one of %v, got %q", Compressions(), codec)
	}
	opts := []parquet.WriterOption{
		schema,
		parquet.Compression(c),
		parquet.DataPageVersion(1),
		parquet.DefaultEncodingFor(parquet.ByteArray, &parquet.Plain),
		parquet.MaxRowsPerRowGroup(int64(rowGroupRows)),
		parquet.PageBufferSize(pageBytes),
		parquet.CreatedBy("reprise replay_parquet", SchemaVersion, ""),
		parquet.KeyValueMetadata(SchemaVersionKey, SchemaVersion),
		parquet.BloomFilters(parquet.SplitBlockFilter(10, "case_id")),
		parquet.ColumnPageBuffers(pagePool),
		parquet.DictionaryMaxBytes(maxDictionaryBytes),
	}
	for _, path := range schema.Columns() {
		leaf, ok := schema.Lookup(path...)
		if !ok || leaf.Node.Type().Kind() != parquet.ByteArray || statsColumns[path[len(path)-1]] {
			continue
		}
		opts = append(opts, parquet.SkipPageStatistics(path...), parquet.SkipPageBounds(path...))
	}
	return opts, nil
}
