package testcollector

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// Main runs a package's tests against the collector built from this repository and returns the
// exit code for os.Exit. *binary is set to $REPRISE_BIN when that names one (scripts/test.sh
// builds the collector once for every suite; the Node and Python tests read the same variable),
// else to ./cmd/reprise built into a temporary directory that is removed after the tests: each
// build is ~100 MB, and a directory left behind by every run filled the disk of a shared CI
// machine.
func Main(m *testing.M, binary *string) int {
	if env := os.Getenv("REPRISE_BIN"); env != "" {
		*binary = env
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "reprise-collector-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "building the collector:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	*binary = filepath.Join(dir, "reprise")
	build := exec.Command("go", "build", "-o", *binary, "./cmd/reprise")
	build.Dir = RepoRoot()
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building the collector:", err)
		return 1
	}
	return m.Run()
}

// RepoRoot is the repository's root directory.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}
