package cli

import (
	"fmt"
	"io"
)

func runCI(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "reprise ci: not built yet")
	return ExitError
}
