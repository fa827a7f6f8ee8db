// Command benchload is the load generator of scripts/bench-pipeline.sh: N agent runs built from
// the four fixture recordings in testdata/otlp in turn, each with a random trace id and random
// span ids (parent links and the log records' span ids follow), sent over OTLP/HTTP protobuf,
// one logs request and one traces request per run. Random ids matter: the corpus with
// sequential ids compressed far better than real traffic does.
//
// With -tools N every model call offers N tools of about 1.2 KB of schema each, recorded where
// the fixture's instrumentation records tools, as production agents offer theirs.
//
// With -json it writes the same corpus as OTLP/JSON (one request a line) instead of sending it:
// the baseline the dataset's bytes are compared with after gzip -6.
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/internal/testfixtures"
)

// recordings are the fixture runs, in the order the corpus cycles through them.
var recordings = []string{"otel-events", "traceloop", "openinference", "otel-nocontent"}

func main() {
	fixtures := flag.String("fixtures", "testdata/otlp", "directory of the fixture recordings")
	runs := flag.Int("runs", 5000, "agent runs to send")
	seed := flag.Uint64("seed", 1, "seed of the random ids (same seed, same corpus)")
	endpoint := flag.String("endpoint", "http://127.0.0.1:4318", "OTLP/HTTP endpoint")
	rate := flag.Float64("rate", 0, "runs per second; 0 sends as fast as the collector accepts (burst)")
	workers := flag.Int("workers", 8, "concurrent HTTP clients")
	jsonOut := flag.String("json", "", "write the corpus as OTLP/JSON lines to this file instead of sending it")
	tools := flag.Int("tools", 0, "tools every model call offers, ~1.2 KB of schema each, where the instrumentation records tools (0: as recorded)")
	flag.Parse()

	corpus, err := build(*fixtures, *runs, *seed, *tools)
	if err != nil {
		log.Fatal(err)
	}
	if *jsonOut != "" {
		if err := writeJSON(corpus, *jsonOut); err != nil {
			log.Fatal(err)
		}
		return
	}
	start := time.Now()
	s := send(corpus, *endpoint, *rate, *workers)
	fmt.Printf("runs=%d spans=%d log_records=%d requests=%d retries=%d failed=%d seconds=%.2f\n",
		len(corpus), s.spans, s.logRecords, s.requests.Load(), s.retries.Load(), s.failed.Load(), time.Since(start).Seconds())
	if s.failed.Load() > 0 {
		os.Exit(1)
	}
}

// run is one agent run: its traces and its log records (empty for recordings without events).
type run struct {
	traces ptrace.Traces
	logs   plog.Logs
}

// build makes n runs from the recordings in dir; with tools > 0 their model calls offer that
// many tools (testfixtures.OfferTools).
func build(dir string, n int, seed uint64, tools int) ([]run, error) {
	templates := make([]run, len(recordings))
	for i, name := range recordings {
		raw, err := os.ReadFile(filepath.Join(dir, name, "traces.json"))
		if err != nil {
			return nil, err
		}
		td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(raw)
		if err != nil {
			return nil, fmt.Errorf("%s traces: %w", name, err)
		}
		ld := plog.NewLogs()
		if raw, err := os.ReadFile(filepath.Join(dir, name, "logs.json")); err == nil {
			if ld, err = (&plog.JSONUnmarshaler{}).UnmarshalLogs(raw); err != nil {
				return nil, fmt.Errorf("%s logs: %w", name, err)
			}
		} else if !os.IsNotExist(err) {
			return nil, err
		}
		if tools > 0 {
			if err := testfixtures.OfferTools(td, testfixtures.ManyTools(tools)); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
		}
		templates[i] = run{td, ld}
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	corpus := make([]run, n)
	for i := range corpus {
		t := templates[i%len(templates)]
		r := run{ptrace.NewTraces(), plog.NewLogs()}
		t.traces.CopyTo(r.traces)
		t.logs.CopyTo(r.logs)
		randomizeIDs(r, rng)
		corpus[i] = r
	}
	return corpus, nil
}

// randomizeIDs gives the run a random trace id and every span a random span id, keeping parent
// links and the span ids the log records point to.
func randomizeIDs(r run, rng *rand.Rand) {
	var traceID pcommon.TraceID
	fill(traceID[:], rng)
	spanIDs := map[pcommon.SpanID]pcommon.SpanID{}
	mapped := func(old pcommon.SpanID) pcommon.SpanID {
		if old.IsEmpty() {
			return old
		}
		id, ok := spanIDs[old]
		if !ok {
			fill(id[:], rng)
			spanIDs[old] = id
		}
		return id
	}
	for _, rs := range r.traces.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, span := range ss.Spans().All() {
				span.SetTraceID(traceID)
				span.SetSpanID(mapped(span.SpanID()))
				span.SetParentSpanID(mapped(span.ParentSpanID()))
			}
		}
	}
	for _, rl := range r.logs.ResourceLogs().All() {
		for _, sl := range rl.ScopeLogs().All() {
			for _, lr := range sl.LogRecords().All() {
				lr.SetTraceID(traceID)
				lr.SetSpanID(mapped(lr.SpanID()))
			}
		}
	}
}

func fill(b []byte, rng *rand.Rand) {
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
}

func writeJSON(corpus []run, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	for _, r := range corpus {
		if r.logs.LogRecordCount() > 0 {
			b, err := (&plog.JSONMarshaler{}).MarshalLogs(r.logs)
			if err != nil {
				return err
			}
			w.Write(append(b, '\n'))
		}
		b, err := (&ptrace.JSONMarshaler{}).MarshalTraces(r.traces)
		if err != nil {
			return err
		}
		w.Write(append(b, '\n'))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}

type stats struct {
	spans, logRecords         int
	requests, retries, failed atomic.Int64
}

// send posts every run (its logs first, so that the events are there when the trace closes) with
// `workers` clients; with rate > 0 run i is not sent before start + i/rate.
func send(corpus []run, endpoint string, rate float64, workers int) *stats {
	s := &stats{}
	client := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: workers}}
	bodies := make([][2][]byte, len(corpus))
	for i, r := range corpus {
		s.spans += r.traces.SpanCount()
		s.logRecords += r.logs.LogRecordCount()
		if r.logs.LogRecordCount() > 0 {
			bodies[i][0], _ = (&plog.ProtoMarshaler{}).MarshalLogs(r.logs)
		}
		bodies[i][1], _ = (&ptrace.ProtoMarshaler{}).MarshalTraces(r.traces)
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range next {
				if bodies[i][0] != nil {
					s.post(client, endpoint+"/v1/logs", bodies[i][0])
				}
				s.post(client, endpoint+"/v1/traces", bodies[i][1])
			}
		})
	}
	start := time.Now()
	for i := range corpus {
		if rate > 0 {
			time.Sleep(time.Until(start.Add(time.Duration(float64(i) / rate * float64(time.Second)))))
		}
		next <- i
	}
	close(next)
	wg.Wait()
	return s
}

// post sends one request and retries what the collector refuses for now (429, 503, connection
// errors) with a growing pause, for up to a minute; anything else counts as failed.
func (s *stats) post(client *http.Client, url string, body []byte) {
	s.requests.Add(1)
	pause := 10 * time.Millisecond
	deadline := time.Now().Add(time.Minute)
	for {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, url, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/x-protobuf")
		resp, err := client.Do(req)
		status := 0
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			status = resp.StatusCode
		}
		if status == http.StatusOK {
			return
		}
		if (err != nil || status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable) && time.Now().Before(deadline) {
			s.retries.Add(1)
			time.Sleep(pause)
			pause = min(2*pause, time.Second)
			continue
		}
		s.failed.Add(1)
		log.Printf("POST %s: status %d, error %v", url, status, err)
		return
	}
}
