//go:build linux

package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gone reports whether the process pid has ended: no such process, or a zombie no one reaped
// (in a container whose first process does not reap orphans).
func gone(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return strings.HasPrefix(rest, "Z") || strings.HasPrefix(rest, "X")
}

// childPid reads the pid a command wrote to file.
func childPid(t *testing.T, file string) int {
	pid, err := readPid(file)
	require.NoError(t, err)
	return pid
}

// The processes a command started end with its run: on --timeout, and when the command exits
// and leaves one behind, they were left running against a harness that was gone (an agent's
// server, a shell's background job).
func TestCIEndsTheProcessesACommandStarted(t *testing.T) {
	root, _, _ := ciSetup(t)
	for _, tc := range []struct{ name, script string }{
		{"timed out", `sleep 40 & echo $! > "$0"; wait`},
		{"left behind", `sleep 40 >/dev/null 2>&1 & echo $! > "$0"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pidFile := childPidFile(t)
			run(t, "ci", "--dataset", root, "--timeout", "2s", "--", "sh", "-c", tc.script, pidFile)
			pid := childPid(t, pidFile)
			assert.Eventually(t, func() bool { return gone(pid) }, 2*time.Second, 20*time.Millisecond, "the command's child %d still runs", pid)
		})
	}
}

// Ctrl-C (SIGINT) ends the runs under way, their commands' children included, marks the cases
// and still writes the reports: with the command in a process group of its own, the terminal's
// Ctrl-C no longer reaches it, so reprise ci must end it itself.
func TestCIInterruptedEndsItsRunsAndReports(t *testing.T) {
	root, _, out := ciSetup(t)
	report := filepath.Join(out, "report.json")
	pidFile := childPidFile(t)
	done := make(chan int, 1)
	start := time.Now()
	go func() {
		code, _, _ := run(t, "ci", "--dataset", root, "--json", report, "--timeout", "60s", "--", "sh", "-c", `sleep 40 & echo $! > "$0"; wait`, pidFile)
		done <- code
	}()
	// The pid file is written by the command, so reprise ci has caught signals by then.
	require.Eventually(t, func() bool { b, err := os.ReadFile(pidFile); return err == nil && len(b) > 0 }, 30*time.Second, 20*time.Millisecond)
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGINT))
	select {
	case code := <-done:
		assert.Equal(t, ExitError, code)
	case <-time.After(30 * time.Second):
		t.Fatal("reprise ci went on after Ctrl-C")
	}
	assert.Less(t, time.Since(start), 30*time.Second)
	pid := childPid(t, pidFile)
	assert.Eventually(t, func() bool { return gone(pid) }, 2*time.Second, 20*time.Millisecond, "the command's child %d still runs", pid)
	rep := readCIReport(t, report)
	require.Len(t, rep.Results, 1)
	assert.Equal(t, outcomeError, rep.Results[0].Outcome)
	assert.Contains(t, rep.Results[0].Message, "interrupted")
}
