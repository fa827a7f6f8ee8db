package replayparquetreceiver

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configoptional"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/internal/confdur"
	"github.com/reprise-dev/reprise/replaycase"
)

// What the receiver emits for each selected case.
const (
	// EmitRaw emits the OTLP spans and GenAI log events the case was built from (raw_spans,
	// raw_events), so replay_case builds and judges the case again.
	EmitRaw = "raw"
	// EmitCases emits the canonical case spans, which the replay_parquet exporter writes as
	// they are; a replay_case processor in between must have trusted_upstream: true.
	EmitCases = "cases"
)

// How long the receiver runs.
const (
	ModeOnce  = "once"  // read the files present at start, then stop reading
	ModeWatch = "watch" // keep polling for files published later
)

// Config is the replay_parquet receiver's configuration.
type Config struct {
	// Directory is the dataset root written by the replay_parquet exporter (the exporter's
	// `directory`). Required unless object_store is set.
	Directory string `mapstructure:"directory"`
	// ObjectStore, when set, reads the dataset from the S3 bucket the replay_parquet exporters
	// upload to (the exporter's `object_store` block: url s3://bucket/prefix; endpoint, region,
	// path_style for S3-compatible servers) instead of Directory: each poll lists the bucket,
	// files are read with ranged GETs. Checkpoints name files by their path under the root, so
	// they are the same for a directory and its bucket copy. Default: not set (Directory).
	ObjectStore configoptional.Optional[dataset.ObjectStoreConfig] `mapstructure:"object_store"`
	// Emit is what each selected case becomes: "raw" (default) or "cases".
	Emit string `mapstructure:"emit"`
	// Mode is "once" (default: the files present at start, then idle) or "watch" (also the
	// files published later, polled every PollInterval).
	Mode string `mapstructure:"mode"`
	// PollInterval is how often watch mode lists the dataset for new files. Default 10s.
	PollInterval time.Duration `mapstructure:"poll_interval"`
	// Storage is the ID of a storage extension (file_storage) that keeps, per file, how far it
	// has been read; a restart continues there, so no case is emitted twice. A checkpoint holds
	// for the row selection it was counted under (rowSelection): another one reads the files
	// again. Required.
	Storage *component.ID `mapstructure:"storage"`
	// BatchSize is the most cases per push to the next consumer; the checkpoint advances after
	// each accepted push. Default 16.
	BatchSize int `mapstructure:"batch_size"`
	// RetryInterval is the wait before pushing again data the next consumer refused with a
	// retryable error (it is pushed again until taken or the collector stops). Default 1s.
	RetryInterval time.Duration `mapstructure:"retry_interval"`
	// Select chooses the cases. Default: every row of quarantine/.
	Select SelectConfig `mapstructure:"select"`
}

// SelectConfig chooses case rows; a row is selected when it matches every non-empty field.
type SelectConfig struct {
	// Datasets to read: "quarantine" and/or "cases". Default ["quarantine"].
	Datasets []string `mapstructure:"datasets"`
	// From and To bound the dt partition (the UTC day the case started), YYYY-MM-DD,
	// inclusive. Empty: unbounded.
	From string `mapstructure:"from"`
	To   string `mapstructure:"to"`
	// Status keeps rows whose status is one of these ("accepted", "quarantined"). Empty: any.
	Status []string `mapstructure:"status"`
	// ReasonCodes keeps rows carrying at least one of these reason codes. Empty: any.
	ReasonCodes []string `mapstructure:"reason_codes"`
	// AdapterVersionBelow keeps rows whose adapter version number (N in
	// "reprise-normalize/N") is below this value; a row without a parseable adapter version
	// counts as below. 0: any.
	AdapterVersionBelow int `mapstructure:"adapter_version_below"`
	// CaseIDs keeps only these case ids. Empty: any.
	CaseIDs []string `mapstructure:"case_ids"`
}

// Validate names the field at fault.
func (c *Config) Validate() error {
	var errs []error
	// The object_store block itself is validated by the collector, prefixed with its key.
	if c.ObjectStore.HasValue() {
		// Rejected rather than one ignored: which dataset gets re-driven must not depend on a
		// precedence rule the config does not show.
		if c.Directory != "" {
			errs = append(errs, fmt.Errorf("directory (%s) and object_store are both set: the receiver reads one dataset, from a directory or from a bucket; leave one out", c.Directory))
		}
	} else if c.Directory == "" {
		errs = append(errs, errors.New("directory: required (the dataset root the replay_parquet exporter writes), or object_store"))
	} else if err := dataset.RefuseS3URL(c.Directory); err != nil {
		// The exporter's directory takes an s3:// URL; this one is a folder only.
		errs = append(errs, err)
	}
	if c.Emit != EmitRaw && c.Emit != EmitCases {
		errs = append(errs, fmt.Errorf("emit: must be %q or %q, got %q", EmitRaw, EmitCases, c.Emit))
	}
	if c.Mode != ModeOnce && c.Mode != ModeWatch {
		errs = append(errs, fmt.Errorf("mode: must be %q or %q, got %q", ModeOnce, ModeWatch, c.Mode))
	}
	if c.PollInterval <= 0 {
		errs = append(errs, fmt.Errorf("poll_interval: must be positive, got %s", c.PollInterval))
	} else if err := confdur.Unitless("poll_interval", c.PollInterval, "s"); err != nil {
		errs = append(errs, err)
	}
	if c.Storage == nil {
		errs = append(errs, errors.New("storage: required (a storage extension such as file_storage keeps what was read, so a restart emits nothing twice)"))
	}
	if c.BatchSize <= 0 {
		errs = append(errs, fmt.Errorf("batch_size: must be positive, got %d", c.BatchSize))
	}
	if c.RetryInterval <= 0 {
		errs = append(errs, fmt.Errorf("retry_interval: must be positive, got %s", c.RetryInterval))
	} else if err := confdur.Unitless("retry_interval", c.RetryInterval, "s"); err != nil {
		errs = append(errs, err)
	}
	if len(c.Select.Datasets) == 0 {
		errs = append(errs, errors.New("select.datasets: at least one of quarantine, cases"))
	}
	for _, d := range c.Select.Datasets {
		if d != dataset.Quarantine && d != dataset.Cases {
			errs = append(errs, fmt.Errorf("select.datasets: %q is not quarantine or cases", d))
		}
	}
	daysValid := true
	for _, f := range [][2]string{{"select.from", c.Select.From}, {"select.to", c.Select.To}} { // in field order, unlike a map
		if _, err := time.Parse(time.DateOnly, f[1]); f[1] != "" && err != nil {
			errs = append(errs, fmt.Errorf("%s: %q is not a YYYY-MM-DD day", f[0], f[1]))
			daysValid = false
		}
	}
	// YYYY-MM-DD days compare as strings, as selectsFile compares them. An empty range would
	// read nothing and still report its backlog done, so it is taken for a typo.
	if daysValid && c.Select.From != "" && c.Select.To != "" && c.Select.From > c.Select.To {
		errs = append(errs, fmt.Errorf("select.from: %s is after select.to (%s); the range is inclusive and would select no day", c.Select.From, c.Select.To))
	}
	statusValid := true
	for _, s := range c.Select.Status {
		if st := replaycase.Status(s); st != replaycase.StatusAccepted && st != replaycase.StatusQuarantined {
			errs = append(errs, fmt.Errorf("select.status: %q is not %s or %s", s, replaycase.StatusAccepted, replaycase.StatusQuarantined))
			statusValid = false
		}
	}
	if statusValid && len(c.Select.Status) > 0 && !c.Select.statusInDatasets() {
		errs = append(errs, fmt.Errorf("select.status: %v matches no row of select.datasets %v (cases/ holds the accepted rows, quarantine/ the quarantined ones); it would select nothing", c.Select.Status, c.Select.Datasets))
	}
	for _, code := range c.Select.ReasonCodes {
		if !replaycase.IsReasonCode(code) {
			errs = append(errs, fmt.Errorf("select.reason_codes: %q is not a reason code the processor or exporter writes", code))
		}
	}
	if len(c.Select.ReasonCodes) > 0 {
		errs = append(errs, c.Select.reasonsReachable(statusValid)...)
	}
	if c.Select.AdapterVersionBelow < 0 {
		errs = append(errs, fmt.Errorf("select.adapter_version_below: must not be negative, got %d", c.Select.AdapterVersionBelow))
	}
	errs = append(errs, c.Select.caseIDErrors()...)
	return errors.Join(errs...)
}

// caseIDErrors names each select.case_ids entry that cannot be meant as written: one not in the
// form of a case id selects no row (rows match by the exact id), and one listed twice adds
// nothing, so it likely stands where another id was meant to be.
func (s *SelectConfig) caseIDErrors() []error {
	var errs []error
	for i, id := range s.CaseIDs {
		switch first := slices.Index(s.CaseIDs, id); {
		case !replaycase.IsID(id) && replaycase.IsID(strings.ToLower(id)):
			errs = append(errs, fmt.Errorf("select.case_ids[%d]: %q is not a case id (32 lower-case hex digits): write it in lower case, %q", i, id, strings.ToLower(id)))
		case !replaycase.IsID(id):
			errs = append(errs, fmt.Errorf("select.case_ids[%d]: %q is not a case id (32 lower-case hex digits)", i, id))
		case first < i:
			errs = append(errs, fmt.Errorf("select.case_ids[%d]: %q is listed before, at select.case_ids[%d]; was another case meant?", i, id, first))
		}
	}
	return errs
}

// statusInDatasets reports whether some status of select.status is stored in a selected
// dataset: a case's status decides its dataset (dataset.DatasetOf), so a status whose dataset is
// not read selects nothing, and the backlog would be reported done with nothing emitted.
func (s *SelectConfig) statusInDatasets() bool {
	for _, st := range s.Status {
		if slices.Contains(s.Datasets, dataset.DatasetOf(&replaycase.Case{Status: replaycase.Status(st)})) {
			return true
		}
	}
	return false
}

// reasonsReachable checks that select.reason_codes can match a row: a reason quarantines its
// case (replaycase.Case.Quarantine), so only quarantined rows, all in quarantine/, carry one.
// Like a status outside the datasets, the selection would otherwise read nothing and report its
// backlog done.
func (s *SelectConfig) reasonsReachable(statusValid bool) []error {
	quarantined := string(replaycase.StatusQuarantined)
	switch {
	case !slices.Contains(s.Datasets, dataset.Quarantine):
		return []error{fmt.Errorf("select.reason_codes: only quarantined rows carry reason codes, and select.datasets %v does not read %s; it would select nothing", s.Datasets, dataset.Quarantine)}
	case statusValid && len(s.Status) > 0 && !slices.Contains(s.Status, quarantined):
		return []error{fmt.Errorf("select.reason_codes: only quarantined rows carry reason codes, and select.status %v keeps none; it would select nothing", s.Status)}
	}
	return nil
}
