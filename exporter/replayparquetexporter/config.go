package replayparquetexporter

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/exporter/exporterhelper"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/internal/confdur"
)

// Config of the replay_parquet exporter.
type Config struct {
	// Directory is the dataset root; cases/, steps/ and quarantine/ are created below it. A
	// local folder, or s3://bucket/prefix: the dataset then lives in that bucket, and every file
	// is published in local_directory first and uploaded whole from there, exactly as with an
	// object_store block (which must then be left out). For an S3-compatible server the URL
	// takes the block's other settings as query parameters:
	// s3://bucket/prefix?endpoint=http://host:9000&region=us-east-1&use_path_style=true.
	// Default "./reprise-data".
	Directory string `mapstructure:"directory"`
	// LocalDirectory is, with an s3:// directory only, the local folder files are published in
	// before their upload, and what a failed upload is retried from. Default "./reprise-data".
	LocalDirectory string `mapstructure:"local_directory"`
	// StagingDirectory holds files while they are written. It must be outside the local dataset
	// root (so readers never see a partial file) and on the same filesystem (so publishing is an
	// atomic rename). Default: the local root (directory, or local_directory) + ".staging".
	StagingDirectory string `mapstructure:"staging_directory"`
	// MaxRowsPerFile caps the rows of one file; a larger batch is written as several files.
	// Default 100000.
	MaxRowsPerFile int `mapstructure:"max_rows_per_file"`
	// RowGroupRows caps the rows of one row group. Default 5000.
	RowGroupRows int `mapstructure:"row_group_rows"`
	// FileMaxAge, when positive, makes each batch a segment staged durably (the queue may
	// drop it: it survives a crash) and merges the segments into one file per dataset and day
	// when the oldest is this old or they reach FileMaxStagedSize. Every file costs ~50 KiB
	// of footer and indexes whatever its rows, so fewer, larger files make the dataset
	// several times smaller; merging copies a page of a column at a time, so larger files do
	// not cost memory. The price is visibility: a case is published up to file_max_age (plus
	// sending_queue.batch.flush_timeout with a queue) after it reached the exporter. At most
	// 5m, because segments whose owner cannot be told alive or dead are adopted by other
	// collectors once 15 minutes old. Default 0: every batch is published as its own files.
	FileMaxAge time.Duration `mapstructure:"file_max_age"`
	// FileMaxStagedSize is how many bytes of segments (Parquet with Snappy) are staged at
	// most before they are merged, with file_max_age. Default 256 MiB.
	FileMaxStagedSize int64 `mapstructure:"file_max_staged_size"`
	// Compression codec of every column: zstd (default), snappy, gzip or none.
	Compression string `mapstructure:"compression"`
	// ObjectStore, when set, also uploads every file published under Directory to an S3 bucket
	// (url: s3://bucket/prefix; endpoint, region, path_style for S3-compatible servers), so
	// that collectors on different hosts share one dataset. A file is uploaded after its local
	// publish, whole, under its final key; the local folder is what failed uploads are retried
	// from. Not with an s3:// directory, which is the same mirror. Default: not set (local
	// folder only).
	ObjectStore configoptional.Optional[dataset.ObjectStoreConfig] `mapstructure:"object_store"`

	// Retention deletes dt= partitions older than an age per dataset; off by default
	// (retention.go).
	Retention RetentionConfig `mapstructure:"retention"`

	// Timeout is the time limit of one write (exporterhelper's timeout; 0: none). Default 5s.
	// A field of its own rather than exporterhelper.TimeoutConfig squashed in: the collector
	// names a squashed struct's errors by its Go field (timeoutconfig: ...), not by the key.
	Timeout time.Duration `mapstructure:"timeout"`

	// sending_queue and retry_on_failure are the collector's exporterhelper settings.
	// sending_queue is off unless configured (each call returns once its cases are written).
	// When configured, sending_queue.batch decides when a file is written: when the batch reaches min_size
	// (default 4 MiB) or after flush_timeout (the visibility interval, default 10s). The
	// queue is counted in bytes (sizer must be bytes; queue_size default 64 MiB,
	// num_consumers default 2), which bounds the exporter's memory; when it is full, new
	// batches are refused with a retryable error. With sending_queue.storage set to a
	// file_storage extension, cases the exporter accepted survive a crash. Behind replay_case
	// with storage, disable the queue (enabled: false): every call then returns only once its
	// cases are written, so replay_case keeps its write-ahead copy until then and no second
	// durable copy is needed; an in-memory queue there would accept cases before they are on
	// disk and let replay_case delete that copy.
	QueueConfig configoptional.Optional[exporterhelper.QueueBatchConfig] `mapstructure:"sending_queue"`
	RetryConfig configretry.BackOffConfig                                `mapstructure:"retry_on_failure"`
}

var _ confmap.Validator = (*Config)(nil)

// Validate rejects settings that would lose data or publish partial files.
func (c *Config) Validate() error {
	var errs []error
	errs = append(errs, c.validateLocation()...)
	// An empty directory is reported above; its root would read as "." here, a second error.
	if staging, root := c.staging(), c.root(); strings.TrimSpace(c.Directory) != "" && within(staging, root) {
		field := "directory"
		if c.bucketDirectory() {
			field = "local_directory"
		}
		errs = append(errs, fmt.Errorf("staging_directory (%s) must be outside %s (%s): readers would see files being written", staging, field, root))
	}
	if c.MaxRowsPerFile <= 0 {
		errs = append(errs, fmt.Errorf("max_rows_per_file must be positive, got %d", c.MaxRowsPerFile))
	}
	if c.RowGroupRows <= 0 {
		errs = append(errs, fmt.Errorf("row_group_rows must be positive, got %d", c.RowGroupRows))
	}
	if c.Timeout < 0 {
		errs = append(errs, fmt.Errorf("timeout must not be negative (0: no time limit), got %s", c.Timeout))
	}
	if c.FileMaxAge < 0 || c.FileMaxAge > maxFileMaxAge {
		errs = append(errs, fmt.Errorf("file_max_age must be between 0 and %s, got %s", maxFileMaxAge, c.FileMaxAge))
	}
	for _, d := range []struct {
		key string
		d   time.Duration
	}{{"timeout", c.Timeout}, {"file_max_age", c.FileMaxAge}} {
		if err := confdur.Unitless(d.key, d.d, "s"); err != nil {
			errs = append(errs, err)
		}
	}
	// Checked with file_max_age off too: the default is positive, so this is a value the user
	// wrote, and it would fail the day file_max_age is turned on.
	if c.FileMaxStagedSize <= 0 {
		errs = append(errs, fmt.Errorf("file_max_staged_size must be positive, got %d", c.FileMaxStagedSize))
	}
	if !slices.Contains(dataset.Compressions(), c.Compression) {
		errs = append(errs, fmt.Errorf("compression must be one of %s; got %q", strings.Join(dataset.Compressions(), ", "), c.Compression))
	}
	if c.QueueConfig.HasValue() && c.QueueConfig.Get().Sizer != exporterhelper.RequestSizerTypeBytes {
		errs = append(errs, fmt.Errorf("sending_queue.sizer must be bytes, got %q: a queue counted in requests or items holds data of any size, so its memory has no bound", c.QueueConfig.Get().Sizer.String()))
	}
	if c.QueueConfig.HasValue() && c.QueueConfig.Get().Batch.HasValue() && c.QueueConfig.Get().Batch.Get().MaxSize > 0 {
		errs = append(errs, errors.New("sending_queue.batch.max_size must be 0: splitting a batch could split a case across files; bound batches with min_size and flush_timeout"))
	}
	errs = append(errs, c.Retention.validate()...)
	return errors.Join(errs...)
}

// within reports whether path is dir or below it. Both are made absolute first: a relative
// directory and an absolute staging_directory (or the reverse) can name the same place.
func within(path, dir string) bool {
	return dataset.Inside(path, dir)
}

// maxFileMaxAge keeps file_max_age well below the age (staleAfter) at which another collector
// sharing the staging directory adopts segments as left by a crash.
const maxFileMaxAge = 5 * time.Minute

// persistentQueue reports whether sending_queue has storage: its batches survive a crash, and
// one written just before it is delivered again after the restart.
func (c *Config) persistentQueue() bool {
	return c.QueueConfig.HasValue() && c.QueueConfig.Get().StorageID != nil
}

// staging is the staging directory after defaults.
func (c *Config) staging() string {
	if c.StagingDirectory != "" {
		return filepath.Clean(c.StagingDirectory)
	}
	return c.root() + ".staging"
}
