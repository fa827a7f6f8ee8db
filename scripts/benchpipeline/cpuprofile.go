//go:build reprise_cpuprofile

// This file is compiled into cmd/reprise only by scripts/bench-pipeline.sh with BENCH_PROFILE
// set (go build -tags reprise_cpuprofile -overlay), never into the distribution: the collector
// has no pprof extension, and a profile of the whole process must cover exactly the window the
// benchmark measures, which a fixed-length /debug/pprof/profile cannot.
//
// REPRISE_CPUPROFILE_ADDR (host:port) serves POST /start?file=PATH, which starts the CPU
// profile into PATH, and POST /stop, which ends it; POST /heap?file=PATH[&gc=1] writes a heap
// profile (gc=1: after a collection, answering with the live heap's bytes).
package main

import (
	"fmt"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"sync"
)

func init() {
	addr := os.Getenv("REPRISE_CPUPROFILE_ADDR")
	if addr == "" {
		return
	}
	var (
		mu  sync.Mutex
		out *os.File
	)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /start", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		f, err := os.Create(r.URL.Query().Get("file"))
		if err == nil {
			if err = pprof.StartCPUProfile(f); err != nil {
				_ = f.Close()
			}
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		out = f
	})
	mux.HandleFunc("POST /stop", func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if out == nil {
			http.Error(w, "no profile running", http.StatusConflict)
			return
		}
		pprof.StopCPUProfile()
		err := out.Close()
		out = nil
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	})
	// POST /heap?file=PATH writes a heap profile (live objects as of the last GC) into PATH. With
	// gc=1 it collects first, so the profile is the heap live now, and answers with the live
	// heap's bytes (runtime.MemStats.HeapAlloc right after that collection).
	mux.HandleFunc("POST /heap", func(w http.ResponseWriter, r *http.Request) {
		collect := r.URL.Query().Get("gc") == "1"
		var m runtime.MemStats
		if collect {
			runtime.GC()
			runtime.ReadMemStats(&m)
		}
		f, err := os.Create(r.URL.Query().Get("file"))
		if err == nil {
			err = pprof.Lookup("heap").WriteTo(f, 0)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		switch {
		case err != nil: // before any body, so that the status says so
			http.Error(w, err.Error(), http.StatusInternalServerError)
		case collect:
			fmt.Fprintf(w, "live_heap_bytes %d\n", m.HeapAlloc)
		}
	})
	go func() { _ = http.ListenAndServe(addr, mux) }()
}
