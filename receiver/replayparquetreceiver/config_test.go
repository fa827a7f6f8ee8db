package replayparquetreceiver

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/replaycase"
)

func loadConfig(t *testing.T, name string) *Config {
	t.Helper()
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	sub, err := cm.Sub(component.MustNewIDWithName("replay_parquet", name).String())
	require.NoError(t, err)
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	require.NoError(t, sub.Unmarshal(cfg))
	return cfg
}

func TestConfigDefaults(t *testing.T) {
	cfg := loadConfig(t, "")
	require.NoError(t, confmap.Validate(cfg))
	storage := component.MustNewID("file_storage")
	assert.Equal(t, &Config{
		Directory: "./reprise-data", Emit: EmitRaw, Mode: ModeOnce, PollInterval: 10 * time.Second,
		Storage: &storage, BatchSize: 16, RetryInterval: time.Second,
		Select: SelectConfig{Datasets: []string{dataset.Quarantine}},
	}, cfg)
}

func TestConfigEverything(t *testing.T) {
	cfg := loadConfig(t, "everything")
	require.NoError(t, confmap.Validate(cfg))
	assert.Equal(t, EmitCases, cfg.Emit)
	assert.Equal(t, ModeWatch, cfg.Mode)
	assert.Equal(t, "file_storage/redrive", cfg.Storage.String())
	assert.Equal(t, SelectConfig{
		Datasets: []string{"quarantine", "cases"}, From: "2026-11-01", To: "2026-11-30",
		Status: []string{"quarantined"}, ReasonCodes: []string{"no_model_output", "no_input_messages"},
		AdapterVersionBelow: 2, CaseIDs: []string{"0123456789abcdef0123456789abcdef"},
	}, cfg.Select)
}

func TestConfigErrorsNameTheField(t *testing.T) {
	err := confmap.Validate(loadConfig(t, "no_storage"))
	require.ErrorContains(t, err, "storage: required")

	err = confmap.Validate(loadConfig(t, "bad"))
	for _, field := range []string{"directory:", "emit:", "mode:", "poll_interval:", "batch_size:", `select.datasets: "steps"`, "select.from:", `select.status: "pending" is not accepted or quarantined`, `select.reason_codes: "model_output"`, "select.adapter_version_below:"} {
		assert.ErrorContains(t, err, field)
	}
}

// An interval written as a plain number decodes as nanoseconds and passed: watch mode listed the
// dataset back to back, and a refused push was retried at once.
func TestConfigRefusesUnitlessIntervals(t *testing.T) {
	err := confmap.Validate(loadConfig(t, "unitless_intervals"))
	assert.ErrorContains(t, err, "poll_interval is 10ns: a number without a unit is nanoseconds; give the unit (10s)")
	assert.ErrorContains(t, err, "retry_interval is 5ns")
}

// Settings that contradict each other are rejected, naming the field, instead of one being
// ignored or the receiver selecting nothing.
func TestConfigRejectsContradictions(t *testing.T) {
	for name, want := range map[string]string{
		"directory_and_object_store": "directory (./reprise-data) and object_store are both set: the receiver reads one dataset, from a directory or from a bucket; leave one out",
		// Read as a local path, the URL named a folder that never exists: watch mode waited for
		// it without a word.
		"bucket_directory":       `directory "s3://reprise/datasets" is a bucket URL: read a bucket with object_store (url, endpoint, region, path_style)`,
		"from_after_to":          "select.from: 2026-11-30 is after select.to (2026-11-01); the range is inclusive and would select no day",
		"status_not_in_datasets": "select.status: [accepted] matches no row of select.datasets [quarantine] (cases/ holds the accepted rows, quarantine/ the quarantined ones); it would select nothing",
		// Only a quarantined row carries reasons, and quarantined rows are in quarantine/ only.
		"reason_codes_without_quarantine": "select.reason_codes: only quarantined rows carry reason codes, and select.datasets [cases] does not read quarantine; it would select nothing",
		"reason_codes_of_accepted":        "select.reason_codes: only quarantined rows carry reason codes, and select.status [accepted] keeps none; it would select nothing",
	} {
		t.Run(name, func(t *testing.T) {
			assert.EqualError(t, confmap.Validate(loadConfig(t, name)), want)
		})
	}
	oneDay := loadConfig(t, "from_after_to")
	oneDay.Select.From = oneDay.Select.To
	assert.NoError(t, confmap.Validate(oneDay), "from = to is one day")
	withCases := loadConfig(t, "status_not_in_datasets")
	withCases.Select.Datasets = append(withCases.Select.Datasets, dataset.Cases)
	assert.NoError(t, confmap.Validate(withCases), "accepted rows are in cases/")
}

// A case id that is not in the form the processor writes, or one listed twice, would select
// nothing or hide the id meant: it is refused, naming its place in the list.
func TestConfigCaseIDsAreCaseIDs(t *testing.T) {
	assert.EqualError(t, confmap.Validate(loadConfig(t, "bad_case_ids")), strings.Join([]string{
		`select.case_ids[1]: "0123456789abcdef0123456789abcde" is not a case id (32 lower-case hex digits)`,
		`select.case_ids[2]: "FEDCBA9876543210FEDCBA9876543210" is not a case id (32 lower-case hex digits): write it in lower case, "fedcba9876543210fedcba9876543210"`,
		`select.case_ids[3]: "0123456789abcdef0123456789abcdef" is listed before, at select.case_ids[0]; was another case meant?`,
		`select.case_ids[4]: "case 0123456789abcdef0123456789ab" is not a case id (32 lower-case hex digits)`,
	}, "\n"))
}

func TestSelection(t *testing.T) {
	q := &replaycase.Case{CaseID: "a", Status: replaycase.StatusQuarantined, AdapterVersion: "reprise-normalize/1",
		Reasons: []replaycase.Reason{{Code: "model_output"}}}
	ok := &replaycase.Case{CaseID: "b", Status: replaycase.StatusAccepted, AdapterVersion: "reprise-normalize/2"}
	old := &replaycase.Case{CaseID: "c", Status: replaycase.StatusAccepted, AdapterVersion: ""}
	for _, tc := range []struct {
		name string
		sel  SelectConfig
		want []string
	}{
		{"everything", SelectConfig{}, []string{"a", "b", "c"}},
		{"status", SelectConfig{Status: []string{"accepted"}}, []string{"b", "c"}},
		{"reason", SelectConfig{ReasonCodes: []string{"tool_results", "model_output"}}, []string{"a"}},
		{"adapter below 2 (none recorded counts as below)", SelectConfig{AdapterVersionBelow: 2}, []string{"a", "c"}},
		{"ids", SelectConfig{CaseIDs: []string{"b", "c"}}, []string{"b", "c"}},
		{"all criteria", SelectConfig{CaseIDs: []string{"a", "b"}, Status: []string{"accepted"}}, []string{"b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, c := range []*replaycase.Case{q, ok, old} {
				if tc.sel.selectsCase(c) {
					got = append(got, c.CaseID)
				}
			}
			assert.Equal(t, tc.want, got)
		})
	}
	days := SelectConfig{Datasets: []string{dataset.Quarantine}, From: "2026-11-02", To: "2026-11-03"}
	assert.False(t, days.selectsFile(dataset.File{Dataset: dataset.Quarantine, Partition: "2026-11-01"}))
	assert.True(t, days.selectsFile(dataset.File{Dataset: dataset.Quarantine, Partition: "2026-11-03"}))
	assert.False(t, days.selectsFile(dataset.File{Dataset: dataset.Quarantine, Partition: "2026-11-04"}))
	assert.False(t, days.selectsFile(dataset.File{Dataset: dataset.Cases, Partition: "2026-11-03"}))
}

func TestFileTimeIsTheUUIDv7Time(t *testing.T) {
	assert.Equal(t, "2024-01-01T00:00:00Z", fileTime("part-018cc251-f400-7000-8000-000000000000.zstd.parquet"))
	assert.Empty(t, fileTime("part-not-a-uuid.zstd.parquet"))
	assert.Empty(t, fileTime("part-018cc251-f400-4000-8000-000000000000.zstd.parquet"), "a v4 uuid holds no time")
}

// select.reason_codes takes exactly replaycase's list: every code a row can carry, and no
// misspelling (it would select nothing).
func TestReasonCodesAreReplaycasesList(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.Directory, cfg.Storage = t.TempDir(), &storageID
	cfg.Select.ReasonCodes = replaycase.ReasonCodes()
	require.NoError(t, cfg.Validate())
	cfg.Select.ReasonCodes = []string{replaycase.ReasonNoModelOutput, "no_model_ouptut"}
	assert.EqualError(t, cfg.Validate(), `select.reason_codes: "no_model_ouptut" is not a reason code the processor or exporter writes`)
}
