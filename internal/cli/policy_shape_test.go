package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A policy key of the wrong YAML shape (a scalar where a list is wanted, a map where a list of
// rules is) was reported as yaml's "cannot unmarshal !!str `tool_ar...` into
// []casediff.FindingType": Go type names and a cut value, not the key and the shape to write.
func TestPolicyOfTheWrongShapeNamesTheKeyAndTheShape(t *testing.T) {
	for _, c := range []struct{ name, yaml, want string }{
		{"fail_on scalar", "fail_on: tool_args_changed\n", `fail_on: want a list of finding types, e.g. fail_on: [tool_args_changed] (line 1 holds a single value)`},
		{"allow map", "allow:\n  type: usage_changed\n", `allow: want a list of rules, each "- type: …" (line 2 holds a map)`},
		{"allow item scalar", "allow:\n  - usage_changed\n", `allow[0]: want a rule with type, path or case, e.g. "- type: usage_changed" (line 2 holds a single value)`},
		{"allow type list", "allow:\n  - type: [usage_changed]\n", `allow[0].type: want one finding type (line 2 holds a list)`},
		{"unknown rule key", "allow:\n  - typ: [usage_changed]\n", "yaml: unmarshal errors:\n  line 2: field typ not found in type cli.AllowRule"},
		{"top list", "- fail_on: [cost_changed]\n", `want a map of fail_on and allow (line 1 holds a list)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "policy.yaml")
			require.NoError(t, os.WriteFile(file, []byte(c.yaml), 0o600))
			_, err := loadPolicy(file)
			require.Error(t, err)
			assert.Equal(t, "policy "+file+": "+c.want, err.Error())
		})
	}
}
