package readers

import (
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/internal/testfixtures"
)

// The SQL snippets in the READMEs are what a new user copies first: each must run against a
// real dataset and return rows.
func TestREADMESQLSnippetsRun(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	repo := filepath.Join(filepath.Dir(file), "..", "..")
	root, _ := writeDataset(t, []string{testfixtures.OTelEvents, testfixtures.Traceloop, testfixtures.OTelNoContent}, nil)
	db := duck(t)
	block := regexp.MustCompile("(?s)```sql\n(.*?)```")
	ran := 0
	for _, doc := range []string{"README.md", "exporter/replayparquetexporter/README.md", "receiver/replayparquetreceiver/README.md", "docs/scale-out.md"} {
		text, err := os.ReadFile(filepath.Join(repo, doc))
		require.NoError(t, err)
		for _, m := range block.FindAllStringSubmatch(string(text), -1) {
			sql := strings.ReplaceAll(m[1], "'reprise-data/", "'"+root+"/")
			for _, stmt := range strings.Split(sql, ";") {
				if strings.TrimSpace(stripComments(stmt)) == "" {
					continue
				}
				rows, err := db.Query(stmt)
				require.NoError(t, err, "%s:\n%s", doc, stmt)
				require.True(t, rows.Next(), "%s: no rows from\n%s", doc, stmt)
				rows.Close()
				ran++
			}
		}
	}
	require.GreaterOrEqual(t, ran, 4)
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
