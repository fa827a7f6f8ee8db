// Package replayext implements the replay extension: it serves the cases in the datasets that
// the replay_parquet exporter writes over HTTP — case lookup, and OpenAI-compatible replay of
// the recorded model responses, tool results and retrieved documents — so that a test can run
// an agent offline, through its unmodified SDK, and get exactly what it got in production.
//
// How a request flows, and where each concern lives:
//
//	HTTP (confighttp: TLS, auth)          extension.go  routes, lifecycle, errors
//	  → read the body                     replay.go     one handler per route
//	  → parse it (three model APIs)       ../wireapi    typed request, case model, rendering
//	  → scrub it                          replay.go     the processor's policy
//	    (both remembered per body)        memo.go       bounded memos of repeated work
//	  → one lookup                        lookup.go     exact match, else strict/lenient (Mode)
//	      index: call-site id → step      store.go      lazy index over ../dataset files
//	        records outside the heap      records.go    fixed-size records, sorted.go lookups
//	      content on demand               cache.go      small LRU of cases read from Parquet
//	        through a few open files      open_files.go footers decoded once, bounded
//	      cursors per session             sessions.go   bounded segmented LRU; session_id.go,
//	                                                    small_map.go (a session's first cursors)
//	      differing paths                 diff.go       paths only, built to reveal no value
//	      refused requests                refusals.go   logged per session and per server
//	  → render the recorded response      ../wireapi    JSON (remembered) or Server-Sent Events
//	listings, divergences                 browse.go     summaries read by rows.go
//
//go:generate mdatagen metadata.yaml
package replayext
