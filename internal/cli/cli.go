// Package cli holds the subcommands of the reprise binary next to the collector itself:
// `reprise diff`, `show`, `ls` and `ci`. `reprise --config …` (and the collector's own
// subcommands such as `validate`) still run the collector; cmd/reprise hands os.Args here
// first and only runs the collector when the first argument is not one of these.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// Exit codes, as diff(1) and test runners use them.
const (
	ExitOK      = 0 // no difference / every case passed
	ExitChanged = 1 // differences found / a case regressed
	ExitError   = 2 // usage or infrastructure error
)

// command is one subcommand.
type command struct {
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
}

var commands = map[string]command{
	"diff":   {"compare two runs decision point by decision point", runDiff},
	"show":   {"a readable timeline of one case", runShow},
	"ls":     {"list the cases of a dataset", runLs},
	"ci":     {"replay a dataset through your agent and fail on what changed", runCI},
	"mutate": {"write a copy of a case with one step edited (a counterfactual)", runMutate},
	"export": {"write cases into one Parquet file to share", runExport},
	"import": {"add the cases of an exported file to a dataset", runImport},
}

// Lookup returns the subcommand named name, if it is one of the CLI's (and not the
// collector's).
func Lookup(name string) (func(args []string, stdout, stderr io.Writer) int, bool) {
	c, ok := commands[name]
	return c.run, ok
}

// Usage lists the subcommands.
func Usage() string {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("reprise subcommands (the collector runs with: reprise --config FILE):\n")
	for _, n := range names {
		fmt.Fprintf(&b, "  reprise %-6s %s\n", n, commands[n].summary)
	}
	return b.String()
}

// parseInterleaved parses flags that may come before, between or after positional arguments
// (`reprise diff A B --format json`), which flag.FlagSet alone stops at. Everything after "--"
// is returned as rest, unparsed. A flag not defined by repeatableFunc may be given once.
func parseInterleaved(fs *flag.FlagSet, args []string) (positional, rest []string, err error) {
	defer onlyOnce(fs)()
	for i, a := range args {
		if a == "--" {
			rest = args[i+1:]
			args = args[:i]
			break
		}
	}
	for {
		if err := fs.Parse(args); err != nil {
			return nil, nil, err
		}
		if fs.NArg() == 0 {
			return positional, rest, nil
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// newFlagSet is a subcommand's flags: parse errors are returned rather than printed, and
// usageError prints the usage line, then the flags, once.
func newFlagSet(name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), usage)
		fs.PrintDefaults()
	}
	fs.SetOutput(io.Discard)
	return fs
}

// usageError prints a usage problem and returns ExitError. Asked for (--help, -h), the usage is
// no error: it goes to stdout, with ExitOK, as Go's flag package and most tools answer it.
func usageError(stdout, stderr io.Writer, fs *flag.FlagSet, err error) int {
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(stdout)
		fs.Usage()
		return ExitOK
	}
	fmt.Fprintln(stderr, "reprise "+fs.Name()+":", err)
	fs.SetOutput(stderr)
	fs.Usage()
	return ExitError
}

// parseTime reads a time given on the command line: a date (midnight UTC) or an RFC 3339 time.
func parseTime(s string) (time.Time, error) {
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("want YYYY-MM-DD or RFC 3339, got %q", s)
	}
	return t.UTC(), nil
}
