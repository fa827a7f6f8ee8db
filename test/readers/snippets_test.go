package readers

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/internal/testdataset"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/internal/testpipeline"
)

// snippet is one SQL statement of a document, its dataset paths pointing at root.
type snippet struct {
	doc, sql string
}

// readmeSnippets returns every SQL statement of the documents that hold DuckDB snippets, with
// 'reprise-data/ replaced by root.
func readmeSnippets(t *testing.T, root string) []snippet {
	_, file, _, _ := runtime.Caller(0)
	repo := filepath.Join(filepath.Dir(file), "..", "..")
	block := regexp.MustCompile("(?s)```sql\n(.*?)```")
	var out []snippet
	for _, doc := range []string{"README.md", "exporter/replayparquetexporter/README.md", "receiver/replayparquetreceiver/README.md", "docs/scale-out.md"} {
		text, err := os.ReadFile(filepath.Join(repo, doc))
		require.NoError(t, err)
		for _, m := range block.FindAllStringSubmatch(string(text), -1) {
			sql := strings.ReplaceAll(m[1], "'reprise-data/", "'"+root+"/")
			for _, stmt := range strings.Split(sql, ";") {
				if strings.TrimSpace(stripComments(stmt)) != "" {
					out = append(out, snippet{doc: doc, sql: stmt})
				}
			}
		}
	}
	return out
}

// The SQL snippets in the READMEs are what a new user copies first: each must run against a
// real dataset and return rows.
func TestREADMESQLSnippetsRun(t *testing.T) {
	root, _ := writeDataset(t, []string{testfixtures.OTelEvents, testfixtures.Traceloop, testfixtures.OTelNoContent}, nil)
	db := duck(t)
	ran := 0
	for _, s := range readmeSnippets(t, root) {
		rows, err := db.Query(s.sql)
		require.NoError(t, err, "%s:\n%s", s.doc, s.sql)
		require.True(t, rows.Next(), "%s: no rows from\n%s", s.doc, s.sql)
		rows.Close()
		ran++
	}
	require.GreaterOrEqual(t, ran, 4)
}

// Delivery is at least once: a collector killed after the exporter wrote a batch and before
// replay_case released its write-ahead records sends the batch again after the restart, the
// same cases under the same case_ids, in files of their own. A snippet that counts, sums or
// deduplicates (GROUP BY, QUALIFY, row_number, DISTINCT ON) must answer the same over that dataset as over
// the batch written once: before, the cost per model summed the steps/ rows of such a case
// twice and the quarantine reasons counted it twice.
func TestREADMESQLSnippetsThatCountSeeABatchWrittenTwiceOnce(t *testing.T) {
	runs := []string{testfixtures.OTelEvents, testfixtures.Traceloop, testfixtures.OTelNoContent}
	root, _ := writeDataset(t, runs, nil)
	db := duck(t)
	var counting []snippet
	for _, s := range readmeSnippets(t, root) {
		if slices.ContainsFunc([]string{"GROUP BY", "QUALIFY", "row_number()", "DISTINCT ON"}, func(k string) bool { return strings.Contains(s.sql, k) }) {
			counting = append(counting, s)
		}
	}
	require.GreaterOrEqual(t, len(counting), 6)
	once := make([][]string, len(counting))
	for i, s := range counting {
		once[i] = queryRows(t, db, s)
	}

	again := testdataset.Writer(t, root, "zstd") // the restarted collector's exporter
	testpipeline.Run(t, again, runs...)
	require.NoError(t, again.Shutdown(context.Background()))
	var cases int
	require.NoError(t, db.QueryRow("SELECT count(*) FROM read_parquet(['"+root+"/cases/*/*.parquet', '"+root+"/quarantine/*/*.parquet'], union_by_name = true)").Scan(&cases))
	require.Equal(t, 6, cases, "every case row twice")

	for i, s := range counting {
		assert.Equal(t, once[i], queryRows(t, db, s), "%s:\n%s", s.doc, s.sql)
	}
}

// queryRows runs a snippet and returns its rows as text, sorted, without the columns that
// name the file a row was read from (a batch written again is in other files). Floating-point
// values are rounded: a sum over the same values in another order may differ in its last bits.
func queryRows(t *testing.T, db *sql.DB, s snippet) []string {
	rows, err := db.Query(s.sql)
	require.NoError(t, err, "%s:\n%s", s.doc, s.sql)
	defer rows.Close()
	cols, err := rows.Columns()
	require.NoError(t, err)
	var out []string
	for rows.Next() {
		values := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range values {
			ptrs[i] = &values[i]
		}
		require.NoError(t, rows.Scan(ptrs...))
		var fields []string
		for i, v := range values {
			if cols[i] == "filename" {
				continue
			}
			if f, ok := v.(float64); ok {
				v = strconv.FormatFloat(f, 'g', 12, 64)
			}
			fields = append(fields, fmt.Sprintf("%s=%v", cols[i], v))
		}
		out = append(out, strings.Join(fields, " "))
	}
	require.NoError(t, rows.Err())
	slices.Sort(out)
	return out
}

func stripComments(s string) string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "--") {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
