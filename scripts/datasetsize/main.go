// Command datasetsize tells where the bytes of a replay dataset go, to choose what to change
// for size: the column chunks by kind (identifiers, raw telemetry, the rest), what is not column
// data (footers, page indexes, bloom filters: a fixed cost per file), and the size of the same
// rows rewritten as one file per dataset with other encodings and zstd levels.
//
//	go run ./scripts/datasetsize /tmp/reprise-bench-data/burst
//
// (scripts/bench-pipeline.sh keeps its datasets there with BENCH_KEEP=/tmp/reprise-bench-data.)
// The first rewrite uses the exporter's own writer (exact: what file_max_age produces when one
// merge holds every row); the others use parquet-go's defaults for statistics and no bloom
// filter, and every span id copy (the exporter's writer stores each span id once), so they show
// the direction and rough size of a change, not exact bytes.
package main

import (
	"bytes"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/replaycase"
)

func main() {
	if len(os.Args) != 2 {
		log.Fatal("usage: datasetsize DATASET_ROOT")
	}
	root := os.Args[1]
	var cases, quarantine []replaycase.Case
	var steps []dataset.StepRow
	var files, total, columns int64
	byKind := map[string]int64{}
	byColumn := map[string]int64{}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".parquet") {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		name := strings.Split(rel, string(filepath.Separator))[0]
		size, err := columnSizes(path, name, byKind, byColumn)
		if err != nil {
			return err
		}
		files++
		total += size
		switch name {
		case dataset.Cases: // read whole: with the span id copies a file may store once
			rows, err := dataset.ReadCases(path)
			cases = append(cases, rows...)
			return err
		case dataset.Quarantine:
			rows, err := dataset.ReadCases(path)
			quarantine = append(quarantine, rows...)
			return err
		case dataset.Steps:
			rows, err := parquet.ReadFile[dataset.StepRow](path)
			steps = append(steps, rows...)
			return err
		}
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, n := range byKind {
		columns += n
	}
	fmt.Printf("%d files, %d bytes: %d cases, %d quarantined, %d steps\n", files, total, len(cases), len(quarantine), len(steps))
	fmt.Printf("%-58s %10d %5.1f %%\n", "not column data (footers, page indexes, bloom filters)", total-columns, pct(total-columns, total))
	for _, kind := range []string{"identifiers", "raw telemetry", "everything else"} {
		fmt.Printf("%-58s %10d %5.1f %%\n", "columns: "+kind, byKind[kind], pct(byKind[kind], total))
	}
	names := make([]string, 0, len(byColumn))
	for k := range byColumn {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool { return byColumn[names[i]] > byColumn[names[j]] })
	fmt.Println("largest column chunks:")
	for _, k := range names[:min(12, len(names))] {
		fmt.Printf("  %-56s %10d\n", k, byColumn[k])
	}

	fmt.Println("the same rows rewritten, one file per dataset:")
	fmt.Printf("  %-56s %10d\n", "the exporter's writer (as file_max_age merges them)", rewrite(append(cases, quarantine...)))
	for _, level := range []struct {
		name  string
		codec *zstd.Codec
	}{{"zstd default level", &zstd.Codec{Level: zstd.DefaultLevel}}, {"zstd best level", &zstd.Codec{Level: zstd.SpeedBestCompression}}} {
		plain := []parquet.WriterOption{parquet.Compression(level.codec), parquet.DataPageVersion(1), parquet.DefaultEncodingFor(parquet.ByteArray, &parquet.Plain)}
		dict := []parquet.WriterOption{parquet.Compression(level.codec), parquet.DataPageVersion(1)}
		without := size(cases, plain) + size(quarantine, plain)
		fmt.Printf("  %-56s %10d\n", level.name+", PLAIN byte arrays (as now)", without+size(steps, plain))
		fmt.Printf("  %-56s %10d\n", level.name+", parquet-go default encodings", size(cases, dict)+size(quarantine, dict)+size(steps, dict))
		fmt.Printf("  %-56s %10d\n", level.name+", PLAIN, without steps/", without)
	}
}

// columnSizes adds the compressed column chunk sizes of one file by kind and by column and
// returns the file's size.
func columnSizes(path, name string, byKind, byColumn map[string]int64) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return 0, err
	}
	pf, err := parquet.OpenFile(f, info.Size())
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	for _, rg := range pf.Metadata().RowGroups {
		for _, c := range rg.Columns {
			column := strings.Join(c.MetaData.PathInSchema, ".")
			n := c.MetaData.TotalCompressedSize
			byColumn[name+": "+column] += n
			leaf := c.MetaData.PathInSchema[len(c.MetaData.PathInSchema)-1]
			switch {
			case strings.HasSuffix(leaf, "_id") && leaf != "call_site_id" && leaf != "response_id" && leaf != "conversation_id" || leaf == "requested_by":
				byKind["identifiers"] += n
			case leaf == "raw_spans" || leaf == "raw_events":
				byKind["raw telemetry"] += n
			default:
				byKind["everything else"] += n
			}
		}
	}
	return info.Size(), nil
}

func size[T any](rows []T, opts []parquet.WriterOption) int64 {
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[T](&buf, opts...)
	if err := dataset.WriteRows(w, rows); err != nil { // as the exporter writes them
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	return int64(buf.Len())
}

// rewrite writes the cases with the exporter's own writer as one file per dataset and day
// (cases/, steps/ from their steps, quarantine/) and returns the bytes written.
func rewrite(rows []replaycase.Case) int64 {
	dir, err := os.MkdirTemp("", "datasetsize-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	w, err := dataset.NewWriter(dataset.WriterConfig{
		Root: filepath.Join(dir, "data"), Staging: filepath.Join(dir, "staging"),
		Compression: "zstd", MaxRowsPerFile: len(rows) + 1, RowGroupRows: 5000,
	})
	if err != nil {
		log.Fatal(err)
	}
	cases := make([]*replaycase.Case, len(rows))
	for i := range rows {
		cases[i] = &rows[i]
	}
	res, err := w.Write(cases)
	if err != nil {
		log.Fatal(err)
	}
	var total int64
	for _, f := range res.Files {
		total += f.Bytes
	}
	return total
}

func pct(n, total int64) float64 { return 100 * float64(n) / float64(total) }
