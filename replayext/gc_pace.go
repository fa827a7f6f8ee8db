package replayext

import "runtime/debug"

// indexingGCPercent is the garbage collector's target while a refresh reads files, as a share
// of the one the process runs with (GOGC, 100 by default).
//
// Indexing allocates fast (a footer per file, decoded pages) and keeps little: the live heap
// is mostly the rest of the collector's. With its usual target the collector lets the heap
// grow to twice that before collecting, and garbage allocated while it marks counts as live
// for the next target. On a million cases, halving the target while files are read lowered
// the peak RSS of start-up by about 10 MiB, for a few more collections (under 0.1 CPU-second
// more; docs/benchmarks.md).
const indexingGCPercent = 50

// tighterGC lowers the garbage collector's target for the time of a refresh that reads files
// and returns what restores it. A process that disabled the collector (GOGC=off, to run on a
// memory limit) or set a lower target keeps its own.
func tighterGC() (restore func()) {
	old := debug.SetGCPercent(indexingGCPercent) // the process's target is known by setting one
	if old <= 0 {
		debug.SetGCPercent(old)
		return func() {}
	}
	if old != 100 {
		debug.SetGCPercent(max(1, old*indexingGCPercent/100))
	}
	return func() { debug.SetGCPercent(old) }
}
