package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
)

// progress reports `reprise ci` as it goes: on a terminal one line rewritten per finished
// case, elsewhere (CI logs) one plain line per case.
type progress struct {
	mu       sync.Mutex
	w        io.Writer
	tty      bool
	total, n int
}

func newProgress(w io.Writer, total int) *progress {
	tty := false
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil {
			tty = st.Mode()&os.ModeCharDevice != 0
		}
	}
	return &progress{w: w, tty: tty, total: total}
}

func (p *progress) done(r caseResult) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	line := fmt.Sprintf("[%d/%d] %-6s %s %s (%.1fs)", p.n, p.total, r.Outcome, r.CaseID, r.AgentName, float64(r.DurationMS)/1000)
	if r.Message != "" {
		line += ": " + r.Message
	}
	if p.tty && r.Outcome == outcomePassed {
		fmt.Fprintf(p.w, "\r\033[K%s", line)
		return
	}
	if p.tty {
		fmt.Fprint(p.w, "\r\033[K")
	}
	fmt.Fprintln(p.w, line)
	if r.Outcome != outcomePassed && r.Stderr != "" {
		lines := strings.Split(strings.TrimRight(r.Stderr, "\n"), "\n")
		if len(lines) > 20 {
			lines = lines[len(lines)-20:]
		}
		for _, l := range lines {
			fmt.Fprintln(p.w, "    | "+l)
		}
	}
}

func (p *progress) summary(r ciReport) {
	if p.tty {
		fmt.Fprint(p.w, "\r\033[K")
	}
	fmt.Fprintf(p.w, "reprise ci: %d cases, %d passed, %d failed, %d errors in %.1fs\n", r.Cases, r.Passed, r.Failed, r.Errors, float64(r.DurationMS)/1000)
}
