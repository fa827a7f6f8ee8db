//go:build unix

package cli

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// inOwnGroup starts cmd in a process group of its own, and makes cancelling cmd (--timeout,
// or reprise ci interrupted) kill the whole group: the agent a shell started, and whatever the
// agent started, end with the run instead of going on against a harness that is gone. Being in
// its own group, the command no longer gets the terminal's Ctrl-C: reprise ci catches it and
// cancels the run (runCI).
func inOwnGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return endGroup(cmd) }
}

// endGroup kills what is left of cmd's process group once it has run (a job left in the
// background); os.ErrProcessDone when nothing is.
func endGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}
