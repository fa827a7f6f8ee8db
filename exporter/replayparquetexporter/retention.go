package replayparquetexporter

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/internal/confdur"
)

// RetentionConfig expires old data: a dt= partition is deleted once the day it holds ended
// longer ago than its dataset's age. Off by default (every age 0 keeps data forever).
type RetentionConfig struct {
	// Cases is how long cases/ and steps/ partitions are kept (together: a case never outlives
	// its steps), e.g. "180d". Default 0: forever.
	Cases Age `mapstructure:"cases"`
	// Quarantine is how long quarantine/ partitions are kept, e.g. "30d". Default 0: forever.
	Quarantine Age `mapstructure:"quarantine"`
	// Failed is how long a dead letter under failed/ is kept after it was last written, e.g.
	// "14d". Default 0: forever.
	Failed Age `mapstructure:"failed"`
	// Interval is how often retention runs; it also runs once at start. Default 1h.
	Interval time.Duration `mapstructure:"interval"`
}

// Age is a duration that also accepts whole days, "180d", since retention is counted in days.
type Age time.Duration

// maxAgeDays is the most days a time.Duration holds (about 292 years).
const maxAgeDays = math.MaxInt64 / int64(24*time.Hour)

// UnmarshalText reads "<n>d" or a Go duration ("720h"). Days beyond what a duration holds are
// refused: the product would wrap around silently (213504d to 25m26s), and retention would
// delete nearly everything. time.ParseDuration refuses such values itself.
func (a *Age) UnmarshalText(text []byte) error {
	s := strings.TrimSpace(string(text))
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseInt(days, 10, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return fmt.Errorf("%q is not a whole number of days", s)
		}
		if err != nil || n > maxAgeDays || n < -maxAgeDays {
			return fmt.Errorf("%q is out of range: a duration holds at most %d days", s, maxAgeDays)
		}
		*a = Age(time.Duration(n) * 24 * time.Hour)
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%q is neither a number of days (\"30d\") nor a duration (\"720h\")", s)
	}
	*a = Age(d)
	return nil
}

func (r RetentionConfig) enabled() bool { return r.Cases > 0 || r.Quarantine > 0 || r.Failed > 0 }

func (r RetentionConfig) validate() []error {
	var errs []error
	// In field order, so that the error reads the same on every run (a map would not).
	for _, f := range []struct {
		name string
		age  Age
	}{{"cases", r.Cases}, {"quarantine", r.Quarantine}, {"failed", r.Failed}} {
		if f.age < 0 {
			errs = append(errs, fmt.Errorf("retention.%s must not be negative, got %s", f.name, time.Duration(f.age)))
		} else if err := confdur.Unitless("retention."+f.name, time.Duration(f.age), "d"); err != nil {
			errs = append(errs, err)
		}
	}
	// Checked with retention off too, like file_max_staged_size: the default is positive.
	if r.Interval <= 0 {
		errs = append(errs, fmt.Errorf("retention.interval must be positive, got %s", r.Interval))
	} else if err := confdur.Unitless("retention.interval", r.Interval, "m"); err != nil {
		errs = append(errs, err)
	}
	return errs
}

func (r RetentionConfig) policy() dataset.Retention {
	return dataset.Retention{Cases: time.Duration(r.Cases), Quarantine: time.Duration(r.Quarantine), Failed: time.Duration(r.Failed)}
}

// startRetention runs retention at start and then every interval until stopRetention.
func (e *parquetExporter) startRetention() {
	if !e.cfg.Retention.enabled() {
		return
	}
	e.retentionStop, e.retentionDone = make(chan struct{}), make(chan struct{})
	// Cancelled by stopRetention: a pass listing the bucket does not hold the shutdown.
	ctx, cancel := context.WithCancel(context.Background())
	e.retentionCancel = cancel
	go func() {
		defer close(e.retentionDone)
		t := time.NewTicker(e.cfg.Retention.Interval)
		defer t.Stop()
		for {
			e.expire(ctx, time.Now())
			select {
			case <-e.retentionStop:
				return
			case <-t.C:
			}
		}
	}()
}

func (e *parquetExporter) stopRetention() {
	if e.retentionStop != nil {
		e.retentionCancel()
		close(e.retentionStop)
		<-e.retentionDone
		e.retentionStop = nil
	}
}

// expire runs one retention pass: every removed partition is counted and logged; a failure is
// logged and the pass goes on (the next pass tries again). With an object store, a local file
// is deleted only once the bucket holds it: until its upload succeeds it is the only copy.
func (e *parquetExporter) expire(ctx context.Context, now time.Time) {
	policy := e.cfg.Retention.policy()
	if e.store != nil {
		policy.Uploaded = func(ds, dt string) (map[string]bool, error) { return e.store.Uploaded(ctx, ds, dt) }
	}
	got, err := dataset.Expire(e.cfg.root(), policy, now)
	for _, x := range got {
		attrs := metric.WithAttributes(attribute.String("dataset", x.Dataset))
		e.telemetry.ExporterReplayParquetExpiredFiles.Add(ctx, int64(x.Files), attrs)
		e.telemetry.ExporterReplayParquetExpiredBytes.Add(ctx, x.Bytes, attrs)
		if x.Files > 0 || x.Kept > 0 || x.KeptForCases > 0 {
			e.logger.Info("retention removed expired data", zap.String("dataset", x.Dataset), zap.String("dt", x.Partition),
				zap.Int("files", x.Files), zap.Int64("bytes", x.Bytes), zap.Int("kept_recently_published", x.Kept),
				zap.Int("kept_for_cases", x.KeptForCases))
		}
		if x.NotUploaded > 0 {
			e.logger.Warn("retention kept expired files the object store does not hold yet; they are deleted once uploaded",
				zap.String("dataset", x.Dataset), zap.String("dt", x.Partition), zap.Int("files", x.NotUploaded), zap.String("url", e.storeURL))
		}
	}
	if err != nil {
		e.telemetry.ExporterReplayParquetRetentionFailures.Add(ctx, 1)
		e.logger.Error("retention could not remove some expired files; the next pass tries again", zap.Error(err))
	}
}
