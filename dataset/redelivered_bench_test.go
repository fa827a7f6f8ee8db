package dataset_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	. "github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/internal/testpipeline"
	"github.com/reprise-dev/reprise/replaycase"
)

// BenchmarkWriteWithDeliveredDigests prices SkipRedelivered, which the exporter turns on with a
// persistent sending_queue: a digest of each case (its JSON, SHA-256) and a delivered- file per
// published batch. Batches of 1,000 fixture cases, each under a new id, published directly.
// Run: go test -run '^$' -bench WriteWithDeliveredDigests -benchtime 5x -count 3 ./dataset/
func BenchmarkWriteWithDeliveredDigests(b *testing.B) {
	var templates [][]byte
	for _, c := range testpipeline.Run(b, nil, testfixtures.OTelEvents, testfixtures.Traceloop, testfixtures.OTelNoContent, testfixtures.OpenInference) {
		t, err := json.Marshal(c)
		require.NoError(b, err)
		templates = append(templates, t)
	}
	for _, skip := range []bool{false, true} {
		b.Run(fmt.Sprintf("skip_redelivered=%t", skip), func(b *testing.B) {
			base := b.TempDir()
			w, err := NewWriter(WriterConfig{
				Root: filepath.Join(base, "data"), Staging: filepath.Join(base, "data.staging"),
				Compression: "zstd", MaxRowsPerFile: 100_000, RowGroupRows: 1024, SkipRedelivered: skip,
			})
			require.NoError(b, err)
			_, err = w.Recover(time.Now().Add(-15 * time.Minute))
			require.NoError(b, err)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				batch := make([]*replaycase.Case, 1000)
				for j := range batch {
					var c replaycase.Case
					require.NoError(b, json.Unmarshal(templates[j%len(templates)], &c))
					c.CaseID = fmt.Sprintf("%016x%016x", i, j)
					batch[j] = &c
				}
				b.StartTimer()
				_, err := w.Write(batch)
				require.NoError(b, err)
			}
			b.StopTimer()
			require.NoError(b, w.Close())
		})
	}
}
