package replayparquetreceiver

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
	"go.opentelemetry.io/collector/exporter/nopexporter"
	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/service/telemetry/otelconftelemetry"
	"go.yaml.in/yaml/v3"

	"github.com/reprise-dev/reprise/dataset"
	"github.com/reprise-dev/reprise/exporter/replayparquetexporter"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/processor/replaycaseprocessor"
	"github.com/reprise-dev/reprise/replaycase"
)

// The re-drive configuration in the README, run as a collector: quarantined cases come back
// accepted, with their ids and provenance.
func TestREADMERedriveConfigInACollector(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "reprise-data")
	capture(t, root, testfixtures.OTelNoContent, 1, 3, strict)
	quarantined := rowsOf(t, root, dataset.Quarantine)
	require.Len(t, quarantined, 3)

	cfg := readmeRedriveConfig(t)
	cfg = strings.NewReplacer("./reprise-data", root, "./reprise-redrive.state", filepath.Join(dir, "state")).Replace(cfg)
	cfg += "  telemetry:\n    metrics:\n      level: none\n"
	path := filepath.Join(dir, "redrive.yaml")
	require.NoError(t, os.WriteFile(path, []byte(cfg), 0o600))

	col, err := otelcol.NewCollector(otelcol.CollectorSettings{
		BuildInfo: component.NewDefaultBuildInfo(),
		Factories: func() (otelcol.Factories, error) {
			var err error
			f := otelcol.Factories{Telemetry: otelconftelemetry.NewFactory()}
			if f.Receivers, err = otelcol.MakeFactoryMap(NewFactory()); err != nil {
				return f, err
			}
			if f.Processors, err = otelcol.MakeFactoryMap(replaycaseprocessor.NewFactory()); err != nil {
				return f, err
			}
			if f.Exporters, err = otelcol.MakeFactoryMap(replayparquetexporter.NewFactory(), nopexporter.NewFactory()); err != nil {
				return f, err
			}
			f.Extensions, err = otelcol.MakeFactoryMap(filestorage.NewFactory())
			return f, err
		},
		ConfigProviderSettings: otelcol.ConfigProviderSettings{ResolverSettings: confmap.ResolverSettings{
			URIs: []string{"file:" + path}, ProviderFactories: []confmap.ProviderFactory{fileprovider.NewFactory()},
		}},
		SkipSettingGRPCLogger: true,
	})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- col.Run(context.Background()) }()
	require.Eventually(t, func() bool {
		select {
		case err := <-done:
			require.NoError(t, err)
			require.Fail(t, "the collector stopped")
		default:
		}
		return len(rowsOf(t, root, dataset.Cases)) == 3
	}, 30*time.Second, 50*time.Millisecond)
	col.Shutdown()
	require.NoError(t, <-done)

	current := currentRows(t, root)
	require.Len(t, current, 3)
	for _, q := range quarantined {
		c := current[q.c.CaseID]
		assert.Equal(t, replaycase.StatusAccepted, c.Status)
		assert.NotEmpty(t, c.Metadata[MetaRedrivenFrom])
		assert.NotEmpty(t, c.Metadata[MetaOriginalIngestedAt])
	}
}

// readmeRedriveConfig is the re-drive configuration the README shows.
func readmeRedriveConfig(t *testing.T) string {
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	var cfg string
	for _, m := range regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(string(readme), -1) {
		if strings.Contains(m[1], "replay_case/redrive") {
			cfg = m[1]
		}
	}
	require.NotEmpty(t, cfg, "the README shows the re-drive configuration")
	return cfg
}

// The receiver's checkpoint passes a row once replay_case took its spans, and replay_case
// holds them until root_grace_period and its write: without its own storage, a kill -9 in
// that window (a second or more after the backlog was read) lost every case in flight, the
// checkpoint saying they were handled. With it, the restarted processor builds them from its
// write-ahead records (found by killing the README's collector: 1,500 of 1,500 cases lost).
func TestREADMERedriveConfigKeepsWhatReplayCaseTookOnDisk(t *testing.T) {
	var doc struct {
		Extensions map[string]any `yaml:"extensions"`
		Processors map[string]struct {
			Storage string `yaml:"storage"`
		} `yaml:"processors"`
		Service struct {
			Extensions []string `yaml:"extensions"`
		} `yaml:"service"`
	}
	require.NoError(t, yaml.Unmarshal([]byte(readmeRedriveConfig(t)), &doc))
	checked := 0
	for id, p := range doc.Processors {
		if !strings.HasPrefix(id, "replay_case") {
			continue
		}
		checked++
		assert.NotEmpty(t, p.Storage, "%s: without storage a kill -9 loses the cases it took", id)
		assert.Contains(t, doc.Extensions, p.Storage, "%s: storage names a configured extension", id)
		assert.Contains(t, doc.Service.Extensions, p.Storage, "%s: storage names an enabled extension", id)
	}
	assert.Positive(t, checked, "the README's re-drive has a replay_case processor")
}
