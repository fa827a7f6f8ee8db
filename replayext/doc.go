// Package replayext implements the replay extension: it serves the cases in the datasets that
// the replay_parquet exporter writes over HTTP — case lookup, and OpenAI-compatible replay of
// the recorded model responses, tool results and retrieved documents — so that a test can run
// an agent offline, through its unmodified SDK, and get exactly what it got in production.
//
//go:generate mdatagen metadata.yaml
package replayext
