package main

import (
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
)

// `reprise --help` prints the collector's help, which knows only the collector's flags and
// subcommands: an ML engineer looking for ls, show, diff, mutate, export, import, prices or ci
// found none of them there. The test binary runs this package's init as reprise does.
func TestHelpListsTheSubcommands(t *testing.T) {
	for _, flag := range []string{"--help", "-h"} {
		out, _ := exec.Command(os.Args[0], flag).CombinedOutput() // the testing package's own help follows
		assert.Contains(t, string(out), "reprise ls ", flag)
		assert.Contains(t, string(out), "reprise mutate ", flag)
	}
}
