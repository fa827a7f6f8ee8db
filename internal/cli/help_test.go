package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// `reprise <subcommand> --help` prints the usage on standard output and exits 0, as Go's flag
// package and most tools do: it printed it on standard error and exited 2, the code of an
// error (`reprise diff --help | less` showed nothing).
func TestHelpIsNotAnError(t *testing.T) {
	for name := range commands {
		for _, flag := range []string{"--help", "-h"} {
			code, out, errOut := run(t, name, flag)
			assert.Equal(t, ExitOK, code, "%s %s: %s", name, flag, errOut)
			assert.Contains(t, out, "usage: reprise "+name, name, flag)
			assert.Empty(t, errOut, name, flag)
		}
	}
}
