//go:build !unix

package cli

import "os/exec"

// inOwnGroup leaves cmd as it is: without process groups, cancelling cmd kills the command
// alone (exec.CommandContext's default).
func inOwnGroup(*exec.Cmd) {}

// endGroup does nothing where there are no process groups.
func endGroup(*exec.Cmd) error { return nil }
