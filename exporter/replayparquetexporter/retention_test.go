package replayparquetexporter

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
	"go.uber.org/zap"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/exporter/replayparquetexporter/internal/metadatatest"
	"github.com/reprise-dev/reprise/internal/testfixtures"
)

// ageInto copies every published file of root into partition dt=day of its dataset, with an
// old modification time, as if it had been written that day.
func ageInto(t *testing.T, root, day string) {
	old := time.Now().Add(-365 * 24 * time.Hour)
	for _, f := range files(t, root) {
		parts := strings.Split(filepath.ToSlash(f), "/")
		require.Len(t, parts, 3, f)
		data, err := os.ReadFile(filepath.Join(root, f))
		require.NoError(t, err)
		dst := filepath.Join(root, parts[0], dataset.PartitionKey+"="+day, parts[2])
		require.NoError(t, os.MkdirAll(filepath.Dir(dst), 0o755))
		require.NoError(t, os.WriteFile(dst, data, 0o644))
		require.NoError(t, os.Chtimes(dst, old, old))
	}
}

func TestRetentionRemovesOnlyExpiredPartitionsAtStart(t *testing.T) {
	cfg := testConfig(t)
	pipeline(t, cfg, testfixtures.OTelEvents, testfixtures.Traceloop, testfixtures.OTelNoContent)
	current := files(t, cfg.Directory)
	require.Len(t, current, 3, "one cases, one steps and one quarantine file")
	oldDay := time.Now().UTC().Add(-200 * 24 * time.Hour).Format(time.DateOnly)
	recentDay := time.Now().UTC().Add(-60 * 24 * time.Hour).Format(time.DateOnly)
	ageInto(t, cfg.Directory, oldDay)
	ageInto(t, cfg.Directory, recentDay)

	cfg.Retention = RetentionConfig{Cases: Age(180 * 24 * time.Hour), Quarantine: Age(30 * 24 * time.Hour), Interval: time.Hour}
	exp := newObserved(t, cfg)
	require.Eventually(t, func() bool { return exp.logs.FilterMessage("retention removed expired data").Len() == 4 }, 10*time.Second, 10*time.Millisecond)
	require.NoError(t, exp.Shutdown(context.Background()))

	var want []string
	for _, f := range current {
		want = append(want, f)
		if strings.HasPrefix(f, dataset.Cases) || strings.HasPrefix(f, dataset.Steps) {
			parts := strings.Split(filepath.ToSlash(f), "/")
			want = append(want, filepath.Join(parts[0], dataset.PartitionKey+"="+recentDay, parts[2]))
		}
	}
	assert.ElementsMatch(t, want, files(t, cfg.Directory), "cases and steps kept 180 days, quarantine 30")

	point := func(ds string, n int64) metricdata.DataPoint[int64] {
		return metricdata.DataPoint[int64]{Value: n, Attributes: attribute.NewSet(attribute.String("dataset", ds))}
	}
	metadatatest.AssertEqualExporterReplayParquetExpiredFiles(t, exp.tel, []metricdata.DataPoint[int64]{
		point(dataset.Cases, 1), point(dataset.Steps, 1), point(dataset.Quarantine, 2),
	}, metricdatatest.IgnoreTimestamp())
	for _, l := range exp.logs.FilterMessage("retention removed expired data").All() {
		assert.Contains(t, []string{oldDay, recentDay}, l.ContextMap()["dt"])
	}
}

func TestRetentionIsOffByDefault(t *testing.T) {
	cfg := testConfig(t)
	pipeline(t, cfg, testfixtures.OTelEvents)
	ageInto(t, cfg.Directory, "2001-01-01")
	before := files(t, cfg.Directory)
	exp := newObserved(t, cfg)
	require.NoError(t, exp.Shutdown(context.Background()))
	assert.Equal(t, before, files(t, cfg.Directory))
	assert.Zero(t, exp.logs.FilterMessage("retention removed expired data").Len())
}

// Days beyond what a time.Duration holds are refused, naming the field: multiplied, they would
// wrap around silently (213504d to 25m26s), and retention would delete nearly everything.
func TestRetentionInDaysBeyondADurationIsRefused(t *testing.T) {
	for _, days := range []string{"213504d", "106752d", "-106752d", "99999999999999999999d"} {
		cm := confmap.NewFromStringMap(map[string]any{"retention": map[string]any{"quarantine": days}})
		err := cm.Unmarshal(createDefaultConfig())
		assert.ErrorContains(t, err, `'retention.quarantine' "`+days+`" is out of range: a duration holds at most 106751 days`)
	}
	cfg := createDefaultConfig().(*Config)
	require.NoError(t, confmap.NewFromStringMap(map[string]any{"retention": map[string]any{"cases": "106751d"}}).Unmarshal(cfg))
	assert.Equal(t, Age(106751*24*time.Hour), cfg.Retention.Cases, "the most days a duration holds")
}

// With an object store, retention deletes a local file only once the bucket holds it: until
// then the local copy is the only one, and what the upload is retried from. Here the bucket
// refuses every request, as S3 does once the credentials have expired: nothing is uploaded, so
// nothing is deleted, and the pass is counted as failed (the next one tries again).
func TestRetentionKeepsWhatTheBucketDoesNotHold(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte("<Error><Code>ExpiredToken</Code><Message>The provided token has expired.</Message></Error>"))
	}))
	t.Cleanup(srv.Close)

	cfg := testConfig(t)
	pipeline(t, cfg, testfixtures.OTelEvents, testfixtures.OTelNoContent)
	ageInto(t, cfg.Directory, "2001-01-01") // published in a year-old partition, never uploaded
	before := files(t, cfg.Directory)

	cfg.ObjectStore = configoptional.Some(dataset.ObjectStoreConfig{URL: "s3://reprise-datasets/team-a", Endpoint: srv.URL, Region: "us-east-1", PathStyle: true})
	cfg.Retention = RetentionConfig{Cases: Age(24 * time.Hour), Quarantine: Age(24 * time.Hour), Interval: time.Hour}
	exp := newObserved(t, cfg)
	require.Eventually(t, func() bool {
		return exp.logs.FilterMessage("retention removed expired data").Len() > 0 ||
			exp.logs.FilterMessage("retention could not remove some expired files; the next pass tries again").Len() > 0
	}, 30*time.Second, 10*time.Millisecond)
	require.NoError(t, exp.Shutdown(context.Background()))

	assert.Equal(t, before, files(t, cfg.Directory), "no file the bucket lacks is deleted")
	failed := exp.logs.FilterMessage("retention could not remove some expired files; the next pass tries again").All()
	require.Len(t, failed, 1)
	assert.Contains(t, failed[0].ContextMap()["error"], "ExpiredToken", "S3's answer is logged")
	assert.Equal(t, 2, exp.logs.FilterMessage("retention kept expired files the object store does not hold yet; they are deleted once uploaded").Len(),
		"one line per partition kept: cases, quarantine")
	kept := exp.logs.FilterMessage("retention removed expired data").FilterField(zap.Int("kept_for_cases", 1)).All()
	require.NotEmpty(t, kept, "the steps files stay with their cases, the bucket not asked for them")
	for _, l := range kept {
		assert.Equal(t, "steps", l.ContextMap()["dataset"])
	}
	metadatatest.AssertEqualExporterReplayParquetRetentionFailures(t, exp.tel, []metricdata.DataPoint[int64]{{Value: 1}}, metricdatatest.IgnoreTimestamp())
}
