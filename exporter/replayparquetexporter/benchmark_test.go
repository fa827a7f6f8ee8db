package replayparquetexporter

import (
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/internal/testfixtures"
	"github.com/reprise-dev/reprise/internal/testpipeline"
	"github.com/reprise-dev/reprise/replaycase"
)

const benchRuns = 1000

// benchInput is benchRuns fixture runs (the four recordings in turn, each with its own trace
// id) turned into cases by the processor, as the canonical OTLP the exporter receives, plus
// the size of the same runs' telemetry as OTLP/JSON with gzip.
func benchInput(b *testing.B) (canonical ptrace.Traces, cases int, otlpJSONGzip int) {
	recordings := []string{testfixtures.OTelEvents, testfixtures.Traceloop, testfixtures.OpenInference, testfixtures.OTelNoContent}
	var runs []string
	var traces []ptrace.Traces
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	for i := 0; i < benchRuns; i++ {
		run := recordings[i%len(recordings)]
		td, ld := testfixtures.Traces(b, run), testfixtures.Logs(b, run)
		testfixtures.WithTraceID(td, ld, i)
		tj, _ := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
		lj, _ := (&plog.JSONMarshaler{}).MarshalLogs(ld)
		_, _ = zw.Write(tj)
		_, _ = zw.Write(lj)
		runs, traces = append(runs, run), append(traces, td)
	}
	require.NoError(b, zw.Close())
	canonical = ptrace.NewTraces()
	for _, c := range testpipeline.RunTraces(b, nil, runs, traces) {
		require.NoError(b, replaycase.Encode(c, canonical))
		cases++
	}
	return canonical, cases, gz.Len()
}

// processCPU is the CPU time (user + system) the process has used: unlike ns/op it does not
// grow when other processes share the machine, and it counts the garbage collector's work on
// other threads.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	require.NoError(b, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func dirSize(b *testing.B, root string) int64 {
	var total int64
	require.NoError(b, filepath.WalkDir(root, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			info, _ := d.Info()
			total += info.Size()
		}
		return err
	}))
	return total
}

// BenchmarkWriteCases measures the exporter alone: decode the canonical cases, write cases/,
// steps/ and quarantine/ files (zstd), fsync and publish. It reports cases per second, dataset
// bytes per case, and the same runs' telemetry as OTLP/JSON+gzip per case for comparison.
// Run: go test -run '^$' -bench WriteCases -benchmem -count 6 ./exporter/replayparquetexporter/
// cpu-ns/op is the process's CPU time per op (all threads, so the garbage collector's too); on a
// shared machine it is steadier than ns/op.
//
// The "segments" run stages each batch as a segment and merges it at once (file_max_age with a
// 1-byte file_max_staged_size): the cost of a batch written twice, once as a segment and once
// merged, against the same batch published directly. A segment's rows go through parquet-go's
// GenericWriter.Write and the merge restores the NULLs it gets wrong; a direct file's rows go
// through Schema.Deconstruct (dataset/segment_nulls.go says why).
func BenchmarkWriteCases(b *testing.B) {
	for _, mode := range []string{"direct", "segments"} {
		b.Run(mode, func(b *testing.B) {
			cfg := testConfig(b)
			if mode == "segments" {
				cfg.FileMaxAge, cfg.FileMaxStagedSize = time.Minute, 1
			}
			benchmarkWriteCases(b, cfg)
		})
	}
}

func benchmarkWriteCases(b *testing.B, cfg *Config) {
	canonical, cases, gz := benchInput(b)
	exp := newExporter(b, cfg)
	runtime.GC()
	cpu := processCPU(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		require.NoError(b, exp.ConsumeTraces(context.Background(), canonical))
	}
	b.StopTimer()
	cpu = processCPU(b) - cpu
	require.NoError(b, exp.Shutdown(context.Background()))
	b.ReportMetric(float64(cases*b.N)/b.Elapsed().Seconds(), "cases/s")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(dirSize(b, cfg.Directory))/float64(cases*b.N), "dataset_B/case")
	b.ReportMetric(float64(gz)/float64(cases), "otlp_json_gzip_B/case")
}

// BenchmarkBatchMemory measures the heap one batch costs while it is written: the peak of live
// heap objects above what was live before, sampled every millisecond, next to the batch's
// size as the queue counts it (OTLP protobuf bytes). With num_consumers batches written at
// once, the exporter holds at most queue_size + num_consumers × (batch + this peak).
// held_between_batches_MiB is the live heap after a garbage collection between two batches
// (the benchmark's input included): what the writer keeps while idle.
// Run: go test -run '^$' -bench BatchMemory -benchtime 5x ./exporter/replayparquetexporter/
// With file_max_age, "staged" only stages the batch as a segment (the merge comes later), and
// "segments" stages it and merges it at once, in the same push.
func BenchmarkBatchMemory(b *testing.B) {
	for _, mode := range []string{"direct", "staged", "segments"} {
		b.Run(mode, func(b *testing.B) {
			cfg := testConfig(b)
			if mode == "segments" {
				cfg.FileMaxAge, cfg.FileMaxStagedSize = time.Minute, 1
			}
			if mode == "staged" {
				cfg.FileMaxAge, cfg.FileMaxStagedSize = time.Minute, 1<<40
			}
			benchmarkBatchMemory(b, cfg)
		})
	}
}

func benchmarkBatchMemory(b *testing.B, cfg *Config) {
	canonical, _, _ := benchInput(b)
	batchBytes := (&ptrace.ProtoMarshaler{}).TracesSize(canonical)
	exp := newExporter(b, cfg)
	var worst, held uint64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		before, peak := heapDuring(func() {
			require.NoError(b, exp.ConsumeTraces(context.Background(), canonical))
		})
		held = max(held, before)
		worst = max(worst, peak-before)
	}
	b.StopTimer()
	require.NoError(b, exp.Shutdown(context.Background()))
	b.ReportMetric(float64(batchBytes)/(1<<20), "batch_MiB")
	b.ReportMetric(float64(worst)/(1<<20), "peak_heap_MiB")
	b.ReportMetric(float64(held)/(1<<20), "held_between_batches_MiB")
	b.ReportMetric(float64(worst)/float64(batchBytes), "peak_heap/batch_byte")
}

// BenchmarkMergeMemory measures the heap a merge takes: five batches of benchRuns cases staged
// as segments (file_max_age), then merged into the final files by Shutdown's flush. It reports
// the peak of heap objects above what was live before the merge (sampled every millisecond)
// and the dataset's bytes. A column writer holds up to a page of each column uncompressed until
// it cuts the page, so the merge's heap grows with the page size of cases/ (dataset/options.go).
// Run: go test -run '^$' -bench MergeMemory -benchtime 1x ./exporter/replayparquetexporter/
func BenchmarkMergeMemory(b *testing.B) {
	canonical, cases, _ := benchInput(b)
	benchMerge(b, []ptrace.Traces{canonical}, cases, heapDuring, "merge_peak_heap_MiB")
}

// BenchmarkMergeLiveHeap measures the live heap a merge holds, which sets a paced run's peak
// RSS (docs/benchmarks.md): benchRuns cases staged five times over as segments of 250 cases (a
// paced sweep's hand-off), then merged by Shutdown's flush. The garbage collector runs at
// GOGC=5 meanwhile, so the live heap it reports after each collection follows the merge
// closely (merge_peak_heap_MiB above also counts garbage); merge_peak_live_MiB is its peak
// above what was live before, within about ±1 MiB from run to run.
// Run: go test -run '^$' -bench MergeLiveHeap -benchtime 1x -count 3 ./exporter/replayparquetexporter/
func BenchmarkMergeLiveHeap(b *testing.B) {
	canonical, cases, _ := benchInput(b)
	benchMerge(b, segmentsOf(canonical, 250), cases, liveHeapDuring, "merge_peak_live_MiB")
}

// segmentsOf splits td's resource spans (a case each) into batches of perSegment, as a sweep
// hands them to the exporter.
func segmentsOf(td ptrace.Traces, perSegment int) []ptrace.Traces {
	var segments []ptrace.Traces
	all := td.ResourceSpans()
	for lo := 0; lo < all.Len(); lo += perSegment {
		segment := ptrace.NewTraces()
		for i := lo; i < min(lo+perSegment, all.Len()); i++ {
			all.At(i).CopyTo(segment.ResourceSpans().AppendEmpty())
		}
		segments = append(segments, segment)
	}
	return segments
}

// benchMerge stages segments (cases in all) five times over, then measures the merge that
// Shutdown's flush makes with measure, and reports its peak above what was before as metric,
// with the dataset's bytes per case.
func benchMerge(b *testing.B, segments []ptrace.Traces, cases int, measure func(func()) (before, peak uint64), metric string) {
	var worst uint64
	var datasetBytes int64
	for i := 0; i < b.N; i++ {
		cfg := testConfig(b)
		cfg.FileMaxAge, cfg.FileMaxStagedSize = time.Hour, 1<<40 // staged only, merged at Shutdown
		exp := newExporter(b, cfg)
		for range 5 {
			for _, segment := range segments {
				require.NoError(b, exp.ConsumeTraces(context.Background(), segment))
			}
		}
		before, peak := measure(func() { require.NoError(b, exp.Shutdown(context.Background())) })
		worst = max(worst, peak-before)
		datasetBytes = dirSize(b, cfg.Directory)
	}
	b.ReportMetric(float64(worst)/(1<<20), metric)
	b.ReportMetric(float64(datasetBytes)/float64(5*cases), "dataset_B/case")
}

// liveHeapDuring runs f with the garbage collector at GOGC=5 and returns the live heap of the
// collection before it and the peak live heap of the collections while it ran.
func liveHeapDuring(f func()) (before, peak uint64) {
	runtime.GC()
	defer debug.SetGCPercent(debug.SetGCPercent(5))
	read := runtimeMetric("/gc/heap/live:bytes")
	before = read()
	return before, peakDuring(read, before, 200*time.Microsecond, f)
}

// heapDuring runs f after a garbage collection and returns the bytes of heap objects before it
// and their peak while it ran, sampled every millisecond (never below before).
func heapDuring(f func()) (before, peak uint64) {
	runtime.GC()
	read := runtimeMetric("/memory/classes/heap/objects:bytes")
	before = read()
	return before, peakDuring(read, before, time.Millisecond, f)
}

// runtimeMetric reads one uint64 metric of runtime/metrics.
func runtimeMetric(name string) func() uint64 {
	sample := []metrics.Sample{{Name: name}}
	return func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
}

// peakDuring runs f and returns the highest value read (every interval, never below floor)
// while it ran.
func peakDuring(read func() uint64, floor uint64, every time.Duration, f func()) uint64 {
	done, peaked := make(chan struct{}), make(chan uint64)
	go func() {
		top := floor
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			top = max(top, read())
			select {
			case <-done:
				peaked <- top
				return
			case <-tick.C:
			}
		}
	}()
	f()
	close(done)
	return <-peaked
}

// BenchmarkSegmentSize stages benchRuns cases as segments of a given number of cases each
// (file_max_age), then merges them (Shutdown's flush), as a sweep hands off a paced run's cases:
// ~250 per half-second sweep at 500 runs/s. cpu-us/case is the process's CPU (GC included)
// per case, staging and merge together; what it grows by as segments shrink is what each
// segment costs whatever its size. "published-N" publishes each batch of N cases as its own
// files (file_max_age 0s, the exporter's default): the cost without segments.
// Run: go test -run '^$' -bench SegmentSize -benchtime 5x -count 3 ./exporter/replayparquetexporter/
func BenchmarkSegmentSize(b *testing.B) {
	canonical, cases, _ := benchInput(b)
	for _, run := range []struct {
		name            string
		perBatch        int
		publishEachOnce bool
	}{{"50", 50, false}, {"250", 250, false}, {"1000", 1000, false}, {"published-50", 50, true}, {"published-1000", 1000, true}} {
		b.Run(run.name, func(b *testing.B) {
			segments := segmentsOf(canonical, run.perBatch)
			var cpu time.Duration
			var allocated uint64
			for i := 0; i < b.N; i++ {
				cfg := testConfig(b)
				cfg.FileMaxAge, cfg.FileMaxStagedSize = time.Hour, 1<<40 // staged only, merged at Shutdown
				if run.publishEachOnce {
					cfg.FileMaxAge = 0
				}
				exp := newExporter(b, cfg)
				a0, c0 := heapAllocated(), processCPU(b)
				for _, td := range segments {
					require.NoError(b, exp.ConsumeTraces(context.Background(), td))
				}
				require.NoError(b, exp.Shutdown(context.Background()))
				cpu += processCPU(b) - c0
				allocated += heapAllocated() - a0
			}
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N*cases), "cpu-us/case")
			b.ReportMetric(float64(allocated)/float64(b.N*cases), "heap_B/case")
		})
	}
}

// heapAllocated is the bytes of heap the process has allocated so far.
var heapAllocated = runtimeMetric("/gc/heap/allocs:bytes")
