// Command reconcile checks conservation after a load run: every case the replay_case processor
// closed is a row in the dataset, and everything else it was given is accounted for in its
// metrics (dropped by reason, passed through, refused for retry). cases_closed counts a case
// once the exporter has taken it, so a case dropped after it was built (dropped_cases) is not in
// it: closed cases by status and rows balance, and each run that became a case is counted once,
// in cases_closed or in dropped_cases (processor README, "What cases_closed counts"). It reads the collector's own
// telemetry from its Prometheus endpoint and the row counts from the Parquet footers.
//
//	go run ./scripts/reconcile -metrics http://127.0.0.1:8888/metrics -dataset ./reprise-data
//
// The metrics count since the collector started, so reconcile one collector process against a
// dataset root it alone wrote, after its last case was written (stop sending, wait for the
// exporter's flush). It exits 1 when the numbers disagree.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/parquet-go/parquet-go"
)

func main() {
	metricsURL := flag.String("metrics", "http://127.0.0.1:8888/metrics", "the collector's Prometheus endpoint (service.telemetry.metrics)")
	root := flag.String("dataset", "./reprise-data", "the dataset root the replay_parquet exporter writes")
	flag.Parse()
	r, err := reconcile(*metricsURL, *root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "reconcile:", err)
		os.Exit(2)
	}
	r.print(os.Stdout)
	if !r.ok() {
		os.Exit(1)
	}
}

// report holds both sides of the balance.
type report struct {
	Accepted, Quarantined    float64            // cases closed, by status (processor)
	CaseRows, QuarantineRows int64              // rows in cases/ and quarantine/
	Dropped                  map[string]float64 // cases dropped, by reason (processor)
	Refused, Duplicates      float64            // items refused with a retryable error; items deduplicated
	Passthrough, Received    float64            // traces without GenAI passed on; spans and events accepted
	EmitFailures, Evictions  float64
}

func (r report) ok() bool {
	return float64(r.CaseRows) == r.Accepted && float64(r.QuarantineRows) == r.Quarantined
}

func (r report) print(w io.Writer) {
	fmt.Fprintf(w, "%-42s %12s %12s\n", "", "processor", "dataset")
	fmt.Fprintf(w, "%-42s %12.0f %12d\n", "accepted cases (cases/)", r.Accepted, r.CaseRows)
	fmt.Fprintf(w, "%-42s %12.0f %12d\n", "quarantined cases (quarantine/)", r.Quarantined, r.QuarantineRows)
	reasons := make([]string, 0, len(r.Dropped))
	for k := range r.Dropped {
		reasons = append(reasons, k)
	}
	sort.Strings(reasons)
	for _, k := range reasons {
		fmt.Fprintf(w, "%-42s %12.0f\n", "dropped cases: "+k, r.Dropped[k])
	}
	fmt.Fprintf(w, "%-42s %12.0f\n", "spans and events accepted", r.Received)
	fmt.Fprintf(w, "%-42s %12.0f\n", "spans and events deduplicated", r.Duplicates)
	fmt.Fprintf(w, "%-42s %12.0f\n", "spans and records refused (client retries)", r.Refused)
	fmt.Fprintf(w, "%-42s %12.0f\n", "traces without GenAI passed through", r.Passthrough)
	fmt.Fprintf(w, "%-42s %12.0f\n", "cases closed early by a limit", r.Evictions)
	fmt.Fprintf(w, "%-42s %12.0f\n", "cases refused once by the next consumer", r.EmitFailures)
	if r.ok() {
		fmt.Fprintln(w, "OK: every closed case is a row")
	} else {
		fmt.Fprintln(w, "MISMATCH: closed cases and rows differ (a run still in flight, another writer in the root, or a loss)")
	}
}

func reconcile(metricsURL, root string) (report, error) {
	r := report{Dropped: map[string]float64{}}
	samples, err := scrape(metricsURL)
	if err != nil {
		return r, err
	}
	for _, s := range samples {
		switch s.name {
		case "otelcol_processor_replay_case_cases_closed":
			switch s.labels["status"] {
			case "accepted":
				r.Accepted += s.value
			case "quarantined":
				r.Quarantined += s.value
			}
		case "otelcol_processor_replay_case_dropped_cases":
			r.Dropped[s.labels["reason"]] += s.value
		case "otelcol_processor_replay_case_refused":
			r.Refused += s.value
		case "otelcol_processor_replay_case_duplicates":
			r.Duplicates += s.value
		case "otelcol_processor_replay_case_passthrough_traces":
			r.Passthrough += s.value
		case "otelcol_processor_replay_case_received":
			r.Received += s.value
		case "otelcol_processor_replay_case_emit_failures":
			r.EmitFailures += s.value
		case "otelcol_processor_replay_case_evictions":
			r.Evictions += s.value
		}
	}
	if r.CaseRows, err = rows(filepath.Join(root, "cases")); err != nil {
		return r, err
	}
	if r.QuarantineRows, err = rows(filepath.Join(root, "quarantine")); err != nil {
		return r, err
	}
	return r, nil
}

// rows sums the row counts in the footers of the published .parquet files under dir.
func rows(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if os.IsNotExist(err) {
			return filepath.SkipDir
		}
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".parquet") {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return err
		}
		pf, err := parquet.OpenFile(f, st.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		n += pf.NumRows()
		return nil
	})
	return n, err
}

type sample struct {
	name   string
	labels map[string]string
	value  float64
}

// scrape reads the Prometheus text format: `name{k="v",...} value`.
func scrape(url string) ([]sample, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", url, resp.Status)
	}
	var out []sample
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		s := sample{labels: map[string]string{}}
		rest := line
		if i := strings.IndexByte(line, '{'); i >= 0 {
			j := strings.LastIndexByte(line, '}')
			if j < i {
				continue
			}
			s.name = line[:i]
			for _, kv := range strings.Split(line[i+1:j], ",") {
				if k, v, ok := strings.Cut(kv, "="); ok {
					s.labels[k] = strings.Trim(v, `"`)
				}
			}
			rest = line[j+1:]
		} else {
			f := strings.Fields(line)
			if len(f) < 2 {
				continue
			}
			s.name, rest = f[0], strings.Join(f[1:], " ")
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			continue
		}
		s.name = strings.TrimSuffix(s.name, "_total")
		s.value = v
		out = append(out, s)
	}
	return out, sc.Err()
}
