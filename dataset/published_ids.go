package dataset

import (
	"fmt"

	"github.com/parquet-go/parquet-go"

	"github.com/reprise-dev/reprise/replaycase"
)

// readCaseIDs reads what tells a case sent again from its copy (caseIDRow) from a cases/ or
// quarantine/ file, staged or published, column by column: six of its ~245 columns. A row
// reader of caseIDRow still produced a null for every other column of every row: 9.7 MB
// allocated and ~4.9 ms for a file of 16 cases, against 0.64 MB and ~1.2 ms column by column
// (BenchmarkReadCaseIDs), and a restarted writer reads every file of the hour before.
func readCaseIDs(path string) ([]caseIDRow, error) {
	f, df, err := open(path, parquet.SkipPageIndex(true))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := scanCaseIDs(df)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, df.reads.ofBytes(err))
	}
	return rows, nil
}

// caseIDColumns are the leaf columns readCaseIDs reads, in the order scanCaseIDs reads them.
var caseIDColumns = [][]string{
	{"case_id"}, {"status"}, {"provenance", "span_count"}, {"provenance", "event_count"},
	{"metadata", "key_value", "key"}, {"metadata", "key_value", "value"},
}

func scanCaseIDs(df dataFile) (_ []caseIDRow, err error) {
	defer recoverDecode(&err)
	var leaves [6]parquet.LeafColumn
	for i, path := range caseIDColumns {
		leaf, ok := df.pf.Schema().Lookup(path...)
		if !ok {
			return nil, fmt.Errorf("no column %v", path)
		}
		leaves[i] = leaf
	}
	rows := make([]caseIDRow, 0, min(df.pf.NumRows(), indexBatch)) // not a forged count's capacity
	var cur [6]columnCursor
	defer func() {
		for i := range cur {
			cur[i].close()
		}
	}()
	for _, rg := range df.pf.RowGroups() {
		chunks := rg.ColumnChunks()
		for i, leaf := range leaves {
			if leaf.ColumnIndex >= len(chunks) {
				return nil, fmt.Errorf("row group has no column %v", leaf.Path)
			}
			cur[i].close()
			cur[i].reset(chunks[leaf.ColumnIndex].Pages(), leaf.MaxDefinitionLevel)
		}
		for range rg.NumRows() {
			var row caseIDRow
			var vals [4]parquet.Value
			for i := range vals {
				v, err := cur[i].next()
				if err != nil {
					return nil, err
				}
				vals[i] = v
			}
			row.CaseID, row.Status = vals[0].String(), replaycase.Status(vals[1].String())
			row.Provenance.SpanCount, row.Provenance.EventCount = vals[2].Int64(), vals[3].Int64()
			from, err := redrivenFrom(&cur[4], &cur[5])
			if err != nil {
				return nil, err
			}
			if from != "" {
				row.Metadata = map[string]string{MetaRedrivenFrom: from}
			}
			rows = append(rows, row)
		}
	}
	return rows, nil
}

// redrivenFrom reads one row's metadata map, key and value side by side, and returns its
// MetaRedrivenFrom entry ("" when it has none): the only entry countOf reads. An empty map is
// one null in each column; a value with repetition level 0 starts the next row.
func redrivenFrom(keys, values *columnCursor) (string, error) {
	from := ""
	for first := true; ; first = false {
		if !first {
			if rep, ok := keys.peekRepetition(); !ok || rep == 0 {
				return from, nil
			}
		}
		k, err := keys.next()
		if err != nil {
			return "", err
		}
		v, err := values.next()
		if err != nil {
			return "", err
		}
		if k.DefinitionLevel() == keys.maxDef && string(k.ByteArray()) == MetaRedrivenFrom {
			from = v.String()
		}
	}
}
