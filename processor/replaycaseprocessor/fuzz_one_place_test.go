package replaycaseprocessor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/reprise-dev/reprise/internal/pdatawalk"
	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/replaycase"
)

// FuzzEveryRunEndsInOnePlace throws mangled real runs (the fixtures of testdata/otlp, each
// under its own trace id) at the whole processor, and checks its first promise: every run it
// receives ends in exactly one place.
//
// The input bytes drive a small generator (runOnePlaceScenario, oneplaceRun, mutateSpan): a
// config (max_spans_per_trace 8, sometimes a small max_buffered_bytes or max_events_per_trace,
// sometimes storage on a file_storage extension, with or without keep_open_on_shutdown,
// sometimes a select whose rules keep some runs, the others dropped or passed), a few runs
// whose spans are dropped, duplicated, unparented, given swapped or absurd times, mangled
// gen_ai.* values, reused or zero span ids, stripped of their root or cloned past the span
// limit; their requests (spans and GenAI log events) are split, repeated (client retries),
// reordered, sent with a zero trace id, mixed with a trace without GenAI telemetry and with
// clock moves between them, and, with storage, restarts between them: a graceful stop, kill -9
// between two requests, or kill -9 while the next consumer writes a hand-off (after its write,
// before it returns); the next processor starts on the same storage and gets the rest. The
// next consumer sometimes refuses run 2's cases for good, and sometimes refuses the first
// hand-offs with a retryable error (the processor keeps them and answers new requests with
// 503 meanwhile). A request the processor refuses (retryable backpressure) was not received, as
// for a real client; one during which the process was killed was not acknowledged. After the
// last request the processor is shut down; with storage, what it left stored (refused at
// shutdown, kept open) is what the next start sends, so one more processor starts, sweeps and
// stops. Everything every processor emitted, passed on and logged counts.
//
// The property, checked at the end (README "Guarantees", Duplicates, Durability):
//   - nothing panics, and everything emitted decodes (replaycase.Decode);
//   - every trace id acknowledged (a request the processor returned nil for; with storage
//     across kills and restarts) ended somewhere: a case (accepted or quarantined; the
//     fragments of a trace cut at the span limit or arriving late are extra cases of the same
//     trace id), spans or log events passed on unchanged, a run select did not keep (logged at
//     debug with its trace id), or a drop logged on the drop logger with that trace id (a
//     dropped case is logged with its case id and its run's trace id);
//   - every drop counted in dropped_cases, dropped_passthrough_traces and dropped_spans has its
//     line on the drop logger of the processor that counted it;
//   - every span acknowledged with a span id ended somewhere too: in the raw spans of a case
//     (raw_spans: all), passed on, or dropped and logged with its span id (span_id_reused), or
//     in a run dropped whole (a case, a run passed on unchanged, or a run not selected);
//   - a case_id emitted more than once (a kill after the next consumer wrote its case and before
//     the processor released its records sends it again after the restart) is one row: a reader
//     keeps the last, and the exporter writes a copy marked replay.case.resent only when it
//     holds more spans or events than the row it finds. So each copy holds every span of the
//     copy before it and as many events, and one that holds no more of either is marked resent;
//   - no span (by trace and span id) is in two places, counting a case_id's last copy only: a
//     retry or a restart is no second copy. Allowed only where documented: spans without a
//     trace id (each request is a case of its own), ids forgotten under memory pressure
//     (forgotten_ids), a span passed on unchanged in a hand-off the process was killed in
//     (passed on again after the restart: it has no case_id to be recognised by). A case killed
//     in its hand-off comes back closed under its case_id (README, Durability: before
//     2026-12-08 it came back open and could become a second row sharing its spans);
//   - at most one accepted case_id per trace id: a retry never makes a second accepted case.
func FuzzEveryRunEndsInOnePlace(f *testing.F) {
	for _, seed := range oneplaceSeeds {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		runOnePlaceScenario(t, data)
	})
}

// oneplaceSeeds hit each mutation at least once. The layout (see runOnePlaceScenario): a head
// byte (bit 0: small byte limit; bits 1-2 %3: runs-1; bit 3: run 2 refused for good; bit 4:
// max_events_per_trace 5); per run the fixture, the number of span mutations and each one (op
// of mutateSpan, span, its bytes), how the spans are split, what happens to the log events;
// then request ops (op, i, j, bytes) until op 0.
var oneplaceSeeds = [][]byte{
	{0, 0, 0, 0, 0, 0},                         // one run, unchanged
	{5, 0, 0, 0, 0, 1, 0, 1, 0, 2, 0, 2, 2, 0}, // three runs, small byte limit
	{0, 0, 1, 0, 2, 0, 0, 0},                   // drop a span (the root)
	{0, 0, 1, 1, 3, 0, 0, 0},                   // the same span twice
	{0, 0, 1, 2, 0, 7, 0, 0, 0},                // cut a parent link
	{0, 2, 1, 3, 0, 0, 2, 0},                   // end before start
	{0, 0, 2, 4, 3, 0, 4, 4, 1, 0, 0, 0},       // absurd times: zero, far future
	{0, 0, 4, 5, 3, 0, 0, 0, 65, 66, 67, 5, 4, 1, 1, 1, 5, 3, 2, 2, 2, 5, 4, 3, 3, 200, 0, 0, 0}, // gen_ai.* values: random, bad JSON, huge, wrong type
	{0, 0, 1, 6, 3, 4, 0, 0, 0}, // reuse another span's id
	{0, 0, 1, 7, 0, 0, 0, 0},    // strip the root
	{0, 0, 1, 8, 1, 0, 0, 0},    // no span id
	{0, 0, 4, 9, 0, 1, 1, 9, 1, 2, 2, 9, 3, 3, 3, 9, 4, 4, 4, 0, 0, 0}, // clones past max_spans_per_trace
	{0, 0, 0, 1, 1, 0}, // one request per span, events first
	{0, 0, 0, 2, 0, 0}, // two halves, events after
	{2, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 4, 2, 1, 2, 0},                // two runs: a request retried, two swapped
	{2, 0, 0, 1, 0, 2, 0, 0, 2, 3, 2, 3, 1, 3, 0, 7, 2, 1, 0, 8, 0}, // the clock moves: cases close, a retry after the close
	{0, 0, 0, 0, 0, 4, 0, 1, 5, 0, 0, 0},                            // a trace without GenAI telemetry, a zero trace id
	{0, 0, 0, 0, 3, 1, 1, 2, 2, 0},                                  // events mangled
	{0, 0, 0, 0, 4, 0},                                              // events without their spans
	{10, 0, 0, 0, 0, 2, 0, 0, 0, 0},                                 // the next consumer refuses run 2 for good
	{13, 0, 0, 0, 0, 1, 0, 0, 0, 3, 0, 0, 0, 4, 0, 3, 0},            // refused, three runs, small byte limit, a plain trace
	// Head bit 5: storage; bit 6: keep_open_on_shutdown; bit 7: an extension byte follows
	// (bits 0-1: select, 1 drop, 2 pass, 3 drop with a 0.5 sample; bits 2-4: how many hand-offs
	// the next consumer refuses with a retryable error first). With storage, request op 6 is a
	// restart (then its kind: 0 graceful, 1 kill -9, 2 kill -9 in the next hand-off's write).
	{32, 0, 0, 1, 0, 6, 0, 2, 1, 0},                                          // storage: killed between two spans of a run
	{96, 0, 0, 2, 0, 6, 0, 1, 0, 0},                                          // keep_open_on_shutdown: a graceful restart between two halves
	{32, 0, 0, 0, 0, 6, 0, 1, 2, 3, 0, 3, 1, 1, 0, 4, 0},                     // killed in the write of a case, then the run retried
	{130, 12, 0, 0, 0, 0, 1, 0, 0, 0, 3, 0, 2, 1, 3, 0, 5, 1, 0},             // three retryable refusals, no storage
	{162, 12, 0, 0, 0, 0, 1, 0, 0, 0, 3, 0, 2, 1, 3, 0, 5, 1, 6, 0, 3, 0, 0}, // the same with storage and a graceful restart while refused
	{132, 1, 0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0},                          // select, unselected: drop
	{132, 2, 0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0},                          // select, unselected: pass
	{164, 3, 0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 6, 0, 3, 1, 0},              // select with a sample, storage, a kill
	{236, 7, 0, 0, 1, 0, 1, 0, 2, 0, 2, 0, 0, 0, 6, 0, 2, 2, 3, 0, 4, 1, 0},  // all of it: keep open, refusals, run 2 refused, select
}

// oneplaceReader hands out the fuzz input a byte at a time, then zeros.
type oneplaceReader struct{ b []byte }

func (r *oneplaceReader) next() int {
	if len(r.b) == 0 {
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return int(v)
}

func (r *oneplaceReader) pick(n int) int { return r.next() % n }

// oneplaceReq is one request of the scenario: spans, log events, or a clock move.
type oneplaceReq struct {
	td      ptrace.Traces
	ld      plog.Logs
	advance time.Duration
	restart int // restartGraceful, restartKill, restartInWrite
}

var oneplaceFixtures = []string{testfixtures.OTelEvents, testfixtures.OTelNoContent, testfixtures.Traceloop, testfixtures.OpenInference}

func runOnePlaceScenario(t *testing.T, data []byte) {
	r := &oneplaceReader{b: data}
	head := r.next()
	ext := 0 // the extension byte follows the head when its bit 7 is set
	if head&128 != 0 {
		ext = r.next()
	}
	stored := head&32 != 0
	w := &oneplaceWorld{t: t, next: &refusingNext{refused: map[string]string{}, interrupted: map[string]int{}, retryable: ext >> 2 & 7}, events: map[string]int{}}
	w.next.events = w.events
	if stored {
		w.dir = t.TempDir()
	}
	w.configure = func(c *Config) {
		c.Limits.MaxSpansPerTrace = 8
		c.RawSpans = rawAll
		if head&1 == 1 {
			c.Limits.MaxBufferedBytes = 16_000
		}
		if head&16 != 0 {
			c.Limits.MaxEventsPerTrace = 5 // otel-events has 8
		}
		if stored {
			c.Storage = &storageID
			c.KeepOpenOnShutdown = head&64 != 0
		}
		switch ext & 3 {
		case 1:
			c.Select = &SelectConfig{Rules: oneplaceSelectRules, Unselected: unselectedDrop}
		case 2:
			c.Select = &SelectConfig{Rules: oneplaceSelectRules, Unselected: unselectedPass}
		case 3:
			c.Select = &SelectConfig{Rules: oneplaceSelectRules, SampleRate: 0.5, Unselected: unselectedDrop}
		}
	}
	if head&8 != 0 { // the next consumer refuses run 2 for good
		w.next.trace = pcommon.TraceID{0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xee}.String()
	}
	w.start()

	var reqs []oneplaceReq
	runs := 1 + (head>>1&3)%3
	for i := 0; i < runs; i++ {
		reqs = append(reqs, oneplaceRun(t, r, i+1)...)
	}
	// Request ops: 0 stop, 1 retry a request later, 2 swap two, 3 move the clock, 4 a trace
	// without GenAI telemetry, 5 zero trace id on a request; with storage, 6 a restart.
	ops := 6
	if stored {
		ops = 7
	}
	for n := 0; n < 8; n++ {
		op := r.pick(ops)
		if op == 0 || len(reqs) == 0 {
			break
		}
		i, j := r.pick(len(reqs)), r.pick(len(reqs)+1)
		switch op {
		case 1:
			reqs = insertReq(reqs, j, copyReq(reqs[i]))
		case 2:
			reqs[i], reqs[j%len(reqs)] = reqs[j%len(reqs)], reqs[i]
		case 3:
			reqs = insertReq(reqs, j, oneplaceReq{advance: []time.Duration{500 * time.Millisecond, 3 * time.Second, time.Minute, time.Hour}[r.pick(4)]})
		case 4:
			reqs = insertReq(reqs, j, oneplaceReq{td: plainTrace(byte(i))})
		case 5:
			setTraceID(reqs[i], pcommon.TraceID{})
		case 6:
			reqs = insertReq(reqs, j, oneplaceReq{restart: restartGraceful + r.pick(3)})
		}
	}

	sent := oneplaceSent{traces: map[string]bool{}, spans: map[string]bool{}}
	for _, q := range reqs {
		switch {
		case q.restart == restartInWrite:
			w.next.die = true // the next hand-off is written, and the process dies before it returns
		case q.restart != 0:
			w.restart(q.restart == restartKill)
		case q.advance > 0:
			w.advance(q.advance)
		case q.td != (ptrace.Traces{}):
			kept := copyReq(q)
			err := w.h.traces.ConsumeTraces(context.Background(), q.td)
			if w.died() {
				continue // killed before it answered: not acknowledged
			}
			if err != nil {
				require.ErrorIs(t, err, errBackpressure, "only a retryable refusal is allowed")
				continue // refused: not received
			}
			sent.addTraces(kept.td)
		default:
			kept := copyReq(q)
			err := w.h.logs.ConsumeLogs(context.Background(), q.ld)
			if w.died() {
				continue
			}
			if err != nil {
				require.ErrorIs(t, err, errBackpressure, "only a retryable refusal is allowed")
				continue
			}
			sent.addLogs(kept.ld)
		}
	}
	w.finish()
	require.NoError(t, w.next.undecodable, "what the processor emitted does not decode")
	checkOnePlace(t, w, sent)
}

// The kinds of restart op: a graceful stop (Shutdown), kill -9 between two requests, and kill -9
// while the next consumer writes a hand-off (after its write, before it returns).
const (
	restartGraceful = 1 + iota
	restartKill
	restartInWrite
)

// oneplaceSelectRules select the runs with an error, or a tool span that ends before it starts
// (mutateSpan's op 3); the fixture runs as recorded are not selected.
var oneplaceSelectRules = map[string]string{
	"error":   `span.status.code == STATUS_CODE_ERROR`,
	"swapped": `span.attributes["gen_ai.operation.name"] == "execute_tool" and span.end_time_unix_nano < span.start_time_unix_nano`,
}

// errRetryLater is the next consumer's retryable refusal (an exporter that cannot write yet).
var errRetryLater = errors.New("not now: retry later")

// oneplaceWorld is the processors of one scenario, one after the other on the same storage (a
// restart starts the next), their next consumer, and what each emitted, passed on and logged.
type oneplaceWorld struct {
	t         *testing.T
	configure func(*Config)
	dir       string // the storage directory; "" without storage
	next      *refusingNext
	sink      consumertest.TracesSink // what every processor emitted, in order
	h         *harness                // the running processor
	inst      *oneplaceNext           // its next consumer
	ext       extension.Extension     // its storage
	all       []oneplaceInstance
	events    map[string]int // what happened, logged with the outcome: restarts, deaths, refusals
}

// oneplaceInstance is one processor of a scenario and its loggers.
type oneplaceInstance struct {
	h     *harness
	drops *observer.ObservedLogs // the drop logger
	log   *observer.ObservedLogs // its logger, debug and up ("run not selected")
}

// start starts a processor, on the storage of the one before it (which restores what it
// stored), with the clock where the one before left it.
func (w *oneplaceWorld) start() {
	t := w.t
	var clock time.Time
	if w.h != nil {
		clock = w.h.clock
	}
	h := newHarness(t, w.configure)
	if !clock.IsZero() {
		h.clock = clock
	}
	core, log := observer.New(zap.DebugLevel)
	h.p.logger = zap.New(core)
	w.all = append(w.all, oneplaceInstance{h: h, drops: h.observeDropLog(), log: log})
	h.p.flushRetry = 0 // Shutdown gives up on a refusing next consumer at once
	w.inst = &oneplaceNext{refusingNext: w.next}
	w.next.Traces = &w.sink
	h.p.nextTraces = w.inst
	h.p.nextLogs = oneplaceLogs{Logs: h.logOut, inst: w.inst}
	w.h = h
	if w.dir == "" {
		return
	}
	var host storageHost
	host, w.ext = startFileStorage(t, w.dir)
	require.NoError(t, h.traces.Start(context.Background(), host)) // restores what was stored
	// The target sweeps itself (advance): the sweeper's ticks in real time would make what an
	// input does depend on the machine's speed.
	h.p.mu.Lock()
	h.p.started = false
	h.p.mu.Unlock()
	close(h.p.stop)
	<-h.p.done
}

// died says whether the next consumer died in a write; if so, the processor is killed there and
// a new one started.
func (w *oneplaceWorld) died() bool {
	if !w.inst.dead {
		return false
	}
	w.events["died in a write"]++
	w.restart(true)
	return true
}

// restart stops the processor, gracefully or as kill -9 does (nothing flushed, the storage file
// closed as the kernel would), and starts the next one on its storage.
func (w *oneplaceWorld) restart(kill bool) {
	ctx := context.Background()
	if kill {
		w.events["kill"]++
		require.NoError(w.t, w.h.p.wal.close(ctx))
	} else {
		w.events["graceful restart"]++
		w.stop()
	}
	w.inst.dead = true // nothing it still does reaches the world
	require.NoError(w.t, w.ext.Shutdown(ctx))
	w.start()
}

// stop shuts the processor down. A next consumer that still refuses is no error of the
// processor's: with storage the cases stay stored for the next start, without they are dropped,
// counted and logged.
func (w *oneplaceWorld) stop() {
	err := errors.Join(w.h.traces.Shutdown(context.Background()), w.h.logs.Shutdown(context.Background()))
	if err != nil {
		require.ErrorIs(w.t, err, errRetryLater, "only the next consumer's refusal may fail a shutdown")
	}
	if w.inst.dead {
		w.events["died in a write"]++ // at shutdown: the storage keeps what it was sending
	}
}

// advance moves the clock and sweeps, as harness.advance, where the next consumer may refuse.
func (w *oneplaceWorld) advance(d time.Duration) {
	w.h.clock = w.h.clock.Add(d)
	if err := w.h.p.sweep(context.Background()); err != nil {
		require.ErrorIs(w.t, err, errRetryLater)
	}
	w.died()
}

// finish shuts the last processor down; with storage, what it left stored (cases refused at
// shutdown, open ones kept by keep_open_on_shutdown, a hand-off a death interrupted) is what
// the next start sends, so one more processor starts with a next consumer that no longer
// refuses for a while, and is stopped in turn.
func (w *oneplaceWorld) finish() {
	w.stop()
	if w.dir == "" {
		return
	}
	w.inst.dead = true
	require.NoError(w.t, w.ext.Shutdown(context.Background()))
	w.next.retryable, w.next.die = 0, false
	w.start()
	w.advance(time.Hour)
	require.NoError(w.t, errors.Join(w.h.traces.Shutdown(context.Background()), w.h.logs.Shutdown(context.Background())))
	require.NoError(w.t, w.ext.Shutdown(context.Background()))
}

// refusingNext is the next consumer of every processor of a scenario. It refuses for good every
// request that holds a case or a span of trace, and remembers the trace id of each case id it
// refused; it refuses the first retryable requests with a retryable error; armed (die), it
// writes the next request and dies before it returns.
type refusingNext struct {
	consumer.Traces
	trace       string
	refused     map[string]string
	retryable   int
	die         bool
	interrupted map[string]int // trace/span ids of spans passed on unchanged in a write the process died in
	events      map[string]int
	undecodable error
}

// oneplaceNext is the next consumer as one processor sees it: dead once the process died.
type oneplaceNext struct {
	*refusingNext
	dead bool
}

func (n *oneplaceNext) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	if n.dead {
		return errRetryLater
	}
	if n.trace != "" {
		cases, err := replaycase.Decode(td)
		if err != nil {
			n.undecodable = err // a refusal would hide it as a drop: the check fails on it
			return consumererror.NewPermanent(err)
		}
		hit := false
		for _, c := range cases {
			hit = hit || c.Provenance.TraceID == n.trace
		}
		for _, sp := range allSpans(td) {
			hit = hit || sp.TraceID().String() == n.trace
		}
		if hit {
			for _, c := range cases {
				n.refused[c.CaseID] = c.Provenance.TraceID
			}
			return consumererror.NewPermanent(errors.New("refused for good"))
		}
	}
	if n.retryable > 0 {
		n.retryable--
		n.events["retryable refusal"]++
		return errRetryLater
	}
	if err := n.Traces.ConsumeTraces(ctx, td); err != nil || !n.die {
		return err
	}
	for _, sp := range allSpans(td) {
		if _, isCase := sp.Attributes().Get(replaycase.AttrCaseID); !isCase {
			n.interrupted[spanKey(sp.TraceID(), sp.SpanID())]++
		}
	}
	if _, err := replaycase.Decode(td); err != nil {
		n.undecodable = err
	}
	n.dead, n.die = true, false // written; killed before returning
	return errRetryLater
}

// oneplaceLogs is the next logs consumer as one processor sees it.
type oneplaceLogs struct {
	consumer.Logs
	inst *oneplaceNext
}

func (l oneplaceLogs) ConsumeLogs(ctx context.Context, ld plog.Logs) error {
	if l.inst.dead {
		return errRetryLater
	}
	return l.Logs.ConsumeLogs(ctx, ld)
}

// oneplaceRun is the requests of fixture run n (under trace id n), mangled by the input.
func oneplaceRun(t *testing.T, r *oneplaceReader, n int) []oneplaceReq {
	name := oneplaceFixtures[r.pick(len(oneplaceFixtures))]
	td, ld := testfixtures.Traces(t, name), testfixtures.Logs(t, name)
	testfixtures.WithTraceID(td, ld, n)
	for k := r.pick(6); k > 0; k-- {
		mutateSpan(r, td)
	}
	// How the spans are sent: 0 one request, 1 one per span, 2 two halves.
	var reqs []oneplaceReq
	switch r.pick(3) {
	case 0:
		reqs = append(reqs, oneplaceReq{td: td})
	case 1:
		for _, one := range splitEach(td) {
			reqs = append(reqs, oneplaceReq{td: one})
		}
	case 2:
		parts := splitEach(td)
		a, b := ptrace.NewTraces(), ptrace.NewTraces()
		for i, one := range parts {
			dst := a
			if i >= len(parts)/2 {
				dst = b
			}
			one.ResourceSpans().MoveAndAppendTo(dst.ResourceSpans())
		}
		reqs = append(reqs, oneplaceReq{td: a}, oneplaceReq{td: b})
	}
	// Log events: 0 after the spans, 1 before, 2 none; 3 mangled, 4 without their spans.
	switch r.pick(5) {
	case 0:
		reqs = append(reqs, oneplaceReq{ld: ld})
	case 1:
		reqs = append([]oneplaceReq{{ld: ld}}, reqs...)
	case 3:
		for rec := range pdatawalk.LogRecords(ld) {
			rec.Record.Body().SetStr(mangled(r))
			rec.Record.Attributes().PutStr("gen_ai.system", mangled(r))
		}
		reqs = append(reqs, oneplaceReq{ld: ld})
	case 4:
		reqs = []oneplaceReq{{ld: ld}}
	}
	return reqs
}

// mutateSpan applies one span mutation, chosen by the input, to a span it chooses.
func mutateSpan(r *oneplaceReader, td ptrace.Traces) {
	spans := allSpans(td)
	if len(spans) == 0 {
		return
	}
	op, sp := r.pick(10), spans[r.pick(len(spans))]
	switch op {
	case 0: // drop it
		removeSpans(td, func(s ptrace.Span) bool { return s.SpanID() == sp.SpanID() && s.Name() == sp.Name() })
	case 1: // the same span twice in the request
		sp.CopyTo(firstScope(td).Spans().AppendEmpty())
	case 2: // cut its parent link
		sp.SetParentSpanID(pcommon.SpanID{0xde, 0xad, byte(r.next()), 1, 2, 3, 4, 5})
	case 3: // end before start
		start, end := sp.StartTimestamp(), sp.EndTimestamp()
		sp.SetStartTimestamp(end)
		sp.SetEndTimestamp(start)
	case 4: // absurd times
		if r.pick(2) == 0 {
			sp.SetStartTimestamp(0)
			sp.SetEndTimestamp(0)
		} else {
			sp.SetStartTimestamp(pcommon.Timestamp(1 << 63))
			sp.SetEndTimestamp(pcommon.Timestamp(1<<64 - 1))
		}
	case 5: // a GenAI attribute's value replaced
		var keys []string
		for k := range sp.Attributes().All() {
			if strings.HasPrefix(k, "gen_ai.") || strings.HasPrefix(k, "llm.") || strings.HasPrefix(k, "input.") || strings.HasPrefix(k, "output.") {
				keys = append(keys, k)
			}
		}
		if len(keys) == 0 {
			return
		}
		k := keys[r.pick(len(keys))]
		switch r.pick(4) {
		case 0, 1, 2:
			sp.Attributes().PutStr(k, mangled(r))
		case 3:
			sp.Attributes().PutInt(k, int64(r.next())-128)
		}
	case 6: // reuse another span's id
		sp.SetSpanID(spans[r.pick(len(spans))].SpanID())
	case 7: // strip the root
		removeSpans(td, func(s ptrace.Span) bool { return s.ParentSpanID().IsEmpty() })
	case 8: // no span id
		sp.SetSpanID(pcommon.SpanID{})
	case 9: // a different span beside it (a clone with its own id): toward the span limit
		c := firstScope(td).Spans().AppendEmpty()
		sp.CopyTo(c)
		c.SetSpanID(pcommon.SpanID{0xc1, byte(r.next()), byte(r.next()), 0, 0, 0, 0, 1})
	}
}

// mangled is a value chosen by the input: a random string, JSON cut short, or a huge string.
func mangled(r *oneplaceReader) string {
	switch r.pick(3) {
	case 0:
		return string([]byte{byte(r.next()), byte(r.next()), byte(r.next())})
	case 1:
		return `[{"role":"user","parts":[{"type":"text","content":"hi`
	default:
		return strings.Repeat("x", 64<<10)
	}
}

// plainTrace is a trace without GenAI telemetry: an HTTP server and a database call.
func plainTrace(n byte) ptrace.Traces {
	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	id := pcommon.TraceID{0x91, n, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xee}
	root := spans.AppendEmpty()
	root.SetTraceID(id)
	root.SetSpanID(pcommon.SpanID{0x91, n, 1})
	root.SetName("GET /health")
	root.Attributes().PutStr("http.request.method", "GET")
	db := spans.AppendEmpty()
	db.SetTraceID(id)
	db.SetSpanID(pcommon.SpanID{0x91, n, 2})
	db.SetParentSpanID(root.SpanID())
	db.SetName("SELECT 1")
	return td
}

func allSpans(td ptrace.Traces) []ptrace.Span {
	var out []ptrace.Span
	forEachScopeSpans(td, func(ss ptrace.ScopeSpans) {
		for i := 0; i < ss.Spans().Len(); i++ {
			out = append(out, ss.Spans().At(i))
		}
	})
	return out
}

func firstScope(td ptrace.Traces) ptrace.ScopeSpans {
	var first ptrace.ScopeSpans
	found := false
	forEachScopeSpans(td, func(ss ptrace.ScopeSpans) {
		if !found && ss.Spans().Len() > 0 {
			first, found = ss, true
		}
	})
	return first
}

func removeSpans(td ptrace.Traces, drop func(ptrace.Span) bool) {
	forEachScopeSpans(td, func(ss ptrace.ScopeSpans) { ss.Spans().RemoveIf(drop) })
}

// splitEach is one request per span, each with its resource and scope.
func splitEach(td ptrace.Traces) []ptrace.Traces {
	var out []ptrace.Traces
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		rs := td.ResourceSpans().At(i)
		for j := 0; j < rs.ScopeSpans().Len(); j++ {
			ss := rs.ScopeSpans().At(j)
			for k := 0; k < ss.Spans().Len(); k++ {
				one := ptrace.NewTraces()
				ors := one.ResourceSpans().AppendEmpty()
				rs.Resource().CopyTo(ors.Resource())
				oss := ors.ScopeSpans().AppendEmpty()
				ss.Scope().CopyTo(oss.Scope())
				ss.Spans().At(k).CopyTo(oss.Spans().AppendEmpty())
				out = append(out, one)
			}
		}
	}
	return out
}

func insertReq(reqs []oneplaceReq, at int, q oneplaceReq) []oneplaceReq {
	return append(reqs[:at], append([]oneplaceReq{q}, reqs[at:]...)...)
}

func copyReq(q oneplaceReq) oneplaceReq {
	out := oneplaceReq{advance: q.advance, restart: q.restart}
	if q.td != (ptrace.Traces{}) {
		out.td = ptrace.NewTraces()
		q.td.CopyTo(out.td)
	}
	if q.ld != (plog.Logs{}) {
		out.ld = plog.NewLogs()
		q.ld.CopyTo(out.ld)
	}
	return out
}

func setTraceID(q oneplaceReq, id pcommon.TraceID) {
	if q.td != (ptrace.Traces{}) {
		for _, sp := range allSpans(q.td) {
			sp.SetTraceID(id)
		}
	}
	if q.ld != (plog.Logs{}) {
		for rec := range pdatawalk.LogRecords(q.ld) {
			rec.Record.SetTraceID(id)
		}
	}
}

// oneplaceSent is what the processor received: trace ids, and trace/span ids of spans.
type oneplaceSent struct {
	traces map[string]bool
	spans  map[string]bool
}

func spanKey(trace pcommon.TraceID, span pcommon.SpanID) string {
	return trace.String() + "/" + span.String()
}

func (s oneplaceSent) addTraces(td ptrace.Traces) {
	for _, sp := range allSpans(td) {
		s.traces[sp.TraceID().String()] = true
		if !sp.SpanID().IsEmpty() {
			s.spans[spanKey(sp.TraceID(), sp.SpanID())] = true
		}
	}
}

func (s oneplaceSent) addLogs(ld plog.Logs) {
	for rec := range pdatawalk.LogRecords(ld) {
		if strings.HasPrefix(eventName(rec.Record), "gen_ai.") { // other records pass on at once
			s.traces[rec.Record.TraceID().String()] = true
		}
	}
}

func eventName(lr plog.LogRecord) string {
	if lr.EventName() != "" {
		return lr.EventName()
	}
	v, _ := lr.Attributes().Get("event.name")
	return v.AsString()
}

// checkOnePlace checks the property of FuzzEveryRunEndsInOnePlace over what every processor of
// the scenario emitted, passed on and logged.
func checkOnePlace(t *testing.T, w *oneplaceWorld, sent oneplaceSent) {
	placed := map[string][]string{}          // trace id -> places
	spans := map[string]bool{}               // trace/span ids found in a place
	rows := map[string][]string{}            // case id -> the trace/span ids of each copy emitted, in order
	resent := map[string][]bool{}            // case id -> whether each copy was marked resent
	events := map[string][]int{}             // case id -> how many GenAI events each copy was built from
	accepted := map[string]map[string]bool{} // trace id -> case ids of its accepted cases
	caseTrace := map[string]string{}         // case id -> trace id
	for id, trace := range w.next.refused {
		caseTrace[id] = trace
	}
	for _, td := range w.sink.AllTraces() {
		cases, err := replaycase.Decode(td)
		require.NoError(t, err)
		for _, c := range cases {
			caseTrace[c.CaseID] = c.Provenance.TraceID
			placed[c.Provenance.TraceID] = append(placed[c.Provenance.TraceID], "case "+c.CaseID)
			if c.Status == replaycase.StatusAccepted {
				if accepted[c.Provenance.TraceID] == nil {
					accepted[c.Provenance.TraceID] = map[string]bool{}
				}
				accepted[c.Provenance.TraceID][c.CaseID] = true
			}
			var held []string
			if len(c.RawSpans) > 0 {
				raw, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(c.RawSpans)
				require.NoError(t, err)
				for _, sp := range allSpans(raw) {
					spans[spanKey(sp.TraceID(), sp.SpanID())] = true
					if !sp.SpanID().IsEmpty() { // spans without an id cannot be told apart
						held = append(held, spanKey(sp.TraceID(), sp.SpanID()))
					}
				}
			}
			if c.Provenance.TraceID == "" || c.Provenance.TraceID == zeroTraceID { // each request is a case: a retry is another copy under its case_id
				c.CaseID += fmt.Sprintf("#%d", len(rows))
			}
			rows[c.CaseID] = append(rows[c.CaseID], strings.Join(uniqueSorted(held), " "))
			n := 0
			if len(c.RawEvents) > 0 {
				raw, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(c.RawEvents)
				require.NoError(t, err)
				n = raw.LogRecordCount()
			}
			events[c.CaseID] = append(events[c.CaseID], n)
			if c.Resent {
				w.events["resent"]++
			}
			resent[c.CaseID] = append(resent[c.CaseID], c.Resent)
		}
	}
	copies := map[string]int{} // trace/span ids of the spans in rows and passed on, by how many times
	for _, copiesOfCase := range rows {
		for _, key := range strings.Fields(copiesOfCase[len(copiesOfCase)-1]) { // a reader keeps the last row of a case_id
			copies[key]++
		}
	}
	for _, td := range w.sink.AllTraces() {
		for _, sp := range allSpans(td) {
			if _, isCase := sp.Attributes().Get(replaycase.AttrCaseID); !isCase {
				placed[sp.TraceID().String()] = append(placed[sp.TraceID().String()], "passed span")
				spans[spanKey(sp.TraceID(), sp.SpanID())] = true
				if !sp.SpanID().IsEmpty() { // spans without an id cannot be told apart
					copies[spanKey(sp.TraceID(), sp.SpanID())]++
				}
			}
		}
	}
	forgotten := false
	for _, in := range w.all {
		for _, ld := range in.h.logOut.AllLogs() {
			for rec := range pdatawalk.LogRecords(ld) {
				placed[rec.Record.TraceID().String()] = append(placed[rec.Record.TraceID().String()], "passed event")
			}
		}
		for _, e := range in.log.FilterMessage("run not selected").All() {
			trace, _ := loggedTrace(e.ContextMap())
			placed[trace] = append(placed[trace], "not selected: "+e.ContextMap()["action"].(string))
			w.events["not selected: "+e.ContextMap()["action"].(string)]++
		}
		for _, e := range in.drops.All() {
			fields := e.ContextMap()
			trace, named := loggedTrace(fields)
			if span, ok := fields["span_id"].(string); ok && named {
				spans[trace+"/"+span] = true
			}
			caseID, _ := fields["case_id"].(string)
			switch {
			case named:
				placed[trace] = append(placed[trace], "drop: "+e.Message)
			case caseID != "": // raw telemetry dropped: its case was emitted
				placed[caseTrace[caseID]] = append(placed[caseTrace[caseID]], "drop: "+e.Message)
			}
		}
		// Every drop counted is logged, one line per case, run or span.
		for metric, message := range map[string]string{
			"otelcol_processor_replay_case_dropped_cases":              "replay case dropped",
			"otelcol_processor_replay_case_dropped_passthrough_traces": "run passed on unchanged dropped",
			"otelcol_processor_replay_case_dropped_spans":              "span dropped: it reuses the span id",
		} {
			require.Equal(t, sumOf(t, in.h, metric), int64(in.drops.FilterMessageSnippet(message).Len()), "%s against the lines %q", metric, message)
		}
		if _, err := in.h.tel.GetMetric("otelcol_processor_replay_case_forgotten_ids"); err == nil {
			forgotten = true
		}
	}
	t.Logf("%d processors; %v", len(w.all), w.events)
	for trace := range sent.traces {
		if len(placed[trace]) == 0 {
			require.Fail(t, "a run ended nowhere", "trace %s was received and is in no case, not passed on and not logged as dropped", trace)
		}
		require.LessOrEqual(t, len(accepted[trace]), 1, "trace %s: two accepted cases of one run: %v", trace, placed[trace])
	}
	for key := range sent.spans {
		trace, _, _ := strings.Cut(key, "/")
		if dropped(placed[trace]) {
			continue // a case, run or raw telemetry dropped whole is logged by its trace id: its spans with it
		}
		require.True(t, spans[key], "span %s was received and is in no case's raw spans, not passed on and not logged as dropped (places of its trace: %v)", key, placed[trace])
	}
	// A span in two places is a retry that became a second copy. Allowed only where documented:
	// spans without a trace id (each request is a case: a retry is another case under the same
	// case_id), and ids forgotten under memory pressure (forgotten_ids), after which a run
	// delivered again is a first case again, under the first one's case_id, possibly a part.
	if forgotten {
		return
	}
	// A case_id emitted again (after a kill between the write and the release) is one row: the
	// exporter writes a copy marked resent only when it holds more than the row it finds, and a
	// reader keeps the last row. So a copy must hold every span of the one before it and as many
	// events, and one that holds no more of either must be marked resent.
	for id, copiesOfCase := range rows {
		for k := 1; k < len(copiesOfCase); k++ {
			before, now := strings.Fields(copiesOfCase[k-1]), strings.Fields(copiesOfCase[k])
			require.Subset(t, now, before, "case %s emitted again without spans its copy before held (places: %v)", id, placed[caseTrace[id]])
			require.GreaterOrEqual(t, events[id][k], events[id][k-1], "case %s emitted again with fewer events than its copy before", id)
			if len(now) == len(before) && events[id][k] == events[id][k-1] {
				require.True(t, resent[id][k], "case %s emitted again as it was, not marked resent: the exporter writes it twice (places: %v)", id, placed[caseTrace[id]])
			}
		}
	}
	// A run passed on unchanged has no case_id and no resent mark: passed on in a hand-off the
	// process was killed in, it is passed on again after the restart (README, Durability).
	// A case written in such a hand-off comes back as the closed case it was, under its case_id
	// (handoff_marks.go): the copy counted is its last.
	for key, n := range copies {
		if trace, _, _ := strings.Cut(key, "/"); trace != "" {
			require.LessOrEqual(t, n, 1+w.next.interrupted[key], "span %s is in %d places (places of its trace: %v)", key, n, placed[trace])
		}
	}
}

// loggedTrace is the trace a log line names, as this target keys traces: "" for spans that came
// without a trace id, which a line names as 32 zeros. named is false for a line that names no
// trace, or names it "" (it would place nothing one could find).
func loggedTrace(fields map[string]any) (trace string, named bool) {
	trace, _ = fields["trace_id"].(string)
	if trace == zeroTraceID {
		return "", true
	}
	return trace, trace != ""
}

// uniqueSorted is keys sorted, each once.
func uniqueSorted(keys []string) []string {
	slices.Sort(keys)
	return slices.Compact(keys)
}

// dropped says whether a trace's places include a drop of a whole case or of its raw spans, of a
// run passed on unchanged (a trace without GenAI telemetry, or a run select passes), or of a run
// select did not keep.
func dropped(places []string) bool {
	for _, p := range places {
		if strings.HasPrefix(p, "drop: replay case dropped") || strings.HasPrefix(p, "drop: raw telemetry") ||
			p == "drop: run passed on unchanged dropped" || p == "not selected: dropped" {
			return true
		}
	}
	return false
}
