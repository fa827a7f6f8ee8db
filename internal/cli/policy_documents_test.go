package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reprise-dev/reprise/casediff"
)

// A policy file of two YAML documents (two policies pasted into one file, or a "---" left
// between two parts) was read up to its first document: the rules after it were dropped in
// silence, here the fail_on that makes a dearer run fail the build.
func TestPolicyRefusesASecondDocument(t *testing.T) {
	file := filepath.Join(t.TempDir(), "policy.yaml")
	require.NoError(t, os.WriteFile(file, []byte("allow:\n  - type: latency_changed\n---\nfail_on: [cost_changed, answer_changed]\n"), 0o600))
	p, err := loadPolicy(file)
	if assert.Error(t, err, "loaded %+v", p) {
		assert.Contains(t, err.Error(), "more than one YAML document")
	}
	// A document marker at the top is one document.
	require.NoError(t, os.WriteFile(file, []byte("---\nfail_on: [cost_changed]\n"), 0o600))
	p, err = loadPolicy(file)
	require.NoError(t, err)
	assert.Equal(t, []casediff.FindingType{casediff.CostChanged}, p.FailOn)
}
