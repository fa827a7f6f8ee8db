package replayparquetexporter

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"

	"github.com/reprise-dev/reprise/dataset"
)

func TestS3DirectoryIsTheBucketWithALocalCopy(t *testing.T) {
	cfg := loadConfig(t, "s3_directory")
	require.NoError(t, confmap.Validate(cfg))
	assert.Equal(t, "/var/lib/reprise/data", cfg.root())
	assert.Equal(t, "/var/lib/reprise/data.staging", cfg.staging())
	oc, ok := cfg.objectStore()
	require.True(t, ok)
	assert.Equal(t, dataset.ObjectStoreConfig{URL: "s3://reprise-datasets/team-a", Endpoint: "http://127.0.0.1:9000", Region: "eu-west-1", PathStyle: true}, oc,
		"the object store settings come from the URL's query")

	cfg.LocalDirectory = ""
	assert.Equal(t, "reprise-data", cfg.root(), "local_directory defaults to ./reprise-data")

	local := loadConfig(t, "")
	_, ok = local.objectStore()
	assert.False(t, ok, "a local directory without object_store uploads nothing")
	assert.Equal(t, "reprise-data", local.root())
}

func TestLocationErrorsNameTheField(t *testing.T) {
	for name, want := range map[string][]string{
		"s3_directory_and_object_store": {"directory (s3://reprise-datasets/team-a) is a bucket and object_store is set too: use one form"},
		"bad_s3_directory": {
			`directory: use_path_style="yes-please": want true or false`,
			"(known: endpoint, region, use_path_style)",
			`directory: unknown query parameters colour`,
			`directory: url "s3:///team-a": want s3://bucket[/prefix]`,
		},
		"other_scheme_directory":         {`directory "gs://reprise-datasets/team-a": want a local folder or s3://bucket/prefix`},
		"local_directory_without_bucket": {"local_directory (./copy) applies only to an s3:// directory; directory (./data) is already the local folder"},
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
