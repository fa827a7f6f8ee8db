package replayparquetexporter

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/exporter/exporterhelper"

	"github.com/reprise-dev/reprise/exporter/replayparquetexporter/internal/metadata"
)

func loadConfig(t *testing.T, name string) *Config {
	t.Helper()
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	cfg := createDefaultConfig().(*Config)
	sub, err := cm.Sub(component.NewIDWithName(metadata.Type, name).String())
	require.NoError(t, err)
	require.NoError(t, sub.Unmarshal(cfg))
	return cfg
}

func TestLoadConfig(t *testing.T) {
	def := loadConfig(t, "")
	require.NoError(t, confmap.Validate(def))
	assert.Equal(t, "./reprise-data", def.Directory)
	assert.Equal(t, "reprise-data.staging", def.staging())
	assert.False(t, def.QueueConfig.HasValue(), "no queue by default: a call returns once its cases are written")
	assert.Zero(t, def.FileMaxAge, "every call is its own files unless file_max_age is set")

	// A sending_queue section the user adds starts from the bounded defaults.
	queue := loadConfig(t, "custom").QueueConfig.Get()
	require.NotNil(t, queue)
	assert.Equal(t, exporterhelper.RequestSizerTypeBytes, queue.Sizer, "the queue's memory is bounded in bytes")
	assert.Equal(t, int64(64<<20), queue.QueueSize)
	assert.Equal(t, 2, queue.NumConsumers)

	custom := loadConfig(t, "custom")
	require.NoError(t, confmap.Validate(custom))
	assert.Equal(t, "/var/lib/reprise/data", custom.Directory)
	assert.Equal(t, "/var/lib/reprise/staging", custom.staging())
	assert.Equal(t, 50000, custom.MaxRowsPerFile)
	assert.Equal(t, 1000, custom.RowGroupRows)
	assert.Equal(t, 30*time.Second, custom.FileMaxAge)
	assert.Equal(t, int64(128<<20), custom.FileMaxStagedSize)
	assert.Equal(t, "snappy", custom.Compression)
	assert.Equal(t, 30*time.Second, custom.Timeout)
	q := custom.QueueConfig.Get()
	require.NotNil(t, q.StorageID)
	assert.Equal(t, "file_storage", q.StorageID.String())
	assert.Equal(t, 5*time.Second, q.Batch.Get().FlushTimeout)
	assert.Equal(t, 10*time.Minute, custom.RetryConfig.MaxElapsedTime)
	assert.Equal(t, RetentionConfig{Cases: Age(180 * 24 * time.Hour), Quarantine: Age(30 * 24 * time.Hour), Failed: Age(14 * 24 * time.Hour), Interval: 30 * time.Minute}, custom.Retention)
	assert.False(t, def.Retention.enabled(), "retention is off by default")
}

func TestUnparsableRetentionSaysWhatItWants(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	sub, err := cm.Sub(component.NewIDWithName(metadata.Type, "unparsable_retention").String())
	require.NoError(t, err)
	err = sub.Unmarshal(createDefaultConfig())
	assert.ErrorContains(t, err, `"half a year" is neither a number of days ("30d") nor a duration ("720h")`)
}

func TestValidateNamesTheField(t *testing.T) {
	for name, want := range map[string][]string{
		"staging_inside": {"staging_directory (data/.staging) must be outside directory (data)"},
		"bad":            {"directory must not be empty", "max_rows_per_file must be positive, got 0", "row_group_rows must be positive, got -1", `compression must be one of gzip, none, snappy, zstd; got "lzma"`, "file_max_age must be between 0 and 5m0s, got 1h0m0s", "file_max_staged_size must be positive, got 0"},
		"split_batches":  {"sending_queue.batch.max_size must be 0"},
		"bad_retention":  {"retention.cases must not be negative, got -24h0m0s\nretention.failed must not be negative, got -48h0m0s", "retention.interval must be positive, got 0s"},
		// A number without a unit decodes as nanoseconds and passed: cases: 7 deleted every day
		// but today's, and interval: 30 ran retention back to back.
		"unitless_retention": {"retention.cases is 7ns: a number without a unit is nanoseconds; give the unit (7d)", "retention.quarantine is 30ns", "retention.failed is 14ns", "retention.interval is 30ns: a number without a unit is nanoseconds; give the unit (30m)"},
		"unitless_durations": {"timeout is 5ns: a number without a unit is nanoseconds; give the unit (5s)", "file_max_age is 30ns: a number without a unit is nanoseconds; give the unit (30s)"},
		"requests_queue":     {`sending_queue.sizer must be bytes, got "requests"`},
		// A size or interval the user wrote is checked even while what uses it is off: no
		// setting is accepted that would fail the day file_max_age or retention is turned on.
		"unused_but_not_positive": {"file_max_staged_size must be positive, got -5", "retention.interval must be positive, got -1s"},
	} {
		t.Run(name, func(t *testing.T) {
			err := confmap.Validate(loadConfig(t, name))
			require.Error(t, err)
			for _, w := range want {
				assert.ErrorContains(t, err, w)
			}
		})
	}
}

// timeout is named as the user wrote it: the collector's own check of its TimeoutConfig, squashed
// into this config, named the Go field (timeoutconfig: timeout value must be ...).
func TestNegativeTimeoutNamesTheKey(t *testing.T) {
	assert.EqualError(t, confmap.Validate(loadConfig(t, "negative_timeout")), "timeout must not be negative (0: no time limit), got -1s")
}

// An empty directory is one mistake, reported once: not also as a staging_directory inside ".".
func TestEmptyDirectoryIsOneError(t *testing.T) {
	err := confmap.Validate(loadConfig(t, "bad"))
	assert.ErrorContains(t, err, "directory must not be empty")
	assert.NotContains(t, err.Error(), "staging_directory")
}

// A relative directory and an absolute staging_directory below it are one place: readers of the
// dataset would see files being written.
func TestStagingInsideTheRootIsRejectedWhateverTheSpelling(t *testing.T) {
	cwd, err := os.Getwd()
	require.NoError(t, err)
	cfg := createDefaultConfig().(*Config)
	cfg.Directory = "data"
	cfg.StagingDirectory = filepath.Join(cwd, "data", "staging")
	assert.ErrorContains(t, confmap.Validate(cfg), "staging_directory ("+cfg.StagingDirectory+") must be outside directory (data)")

	cfg.Directory, cfg.StagingDirectory = filepath.Join(cwd, "data"), "data/staging"
	assert.ErrorContains(t, confmap.Validate(cfg), "must be outside directory")

	cfg.Directory = "."
	cfg.StagingDirectory = ""
	assert.ErrorContains(t, confmap.Validate(cfg), "staging_directory (..staging) must be outside directory (.)", "the default staging of the current folder is inside it")

	cfg.Directory, cfg.StagingDirectory = "data", filepath.Join(cwd, "data.staging")
	assert.NoError(t, confmap.Validate(cfg), "a sibling folder is outside")
}
