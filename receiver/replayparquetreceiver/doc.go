// Package replayparquetreceiver implements the replay_parquet receiver: it reads the case rows
// of a dataset written by the replay_parquet exporter back into a pipeline, either as the raw
// spans and log events a case was built from (to re-drive quarantined cases through
// replay_case with the current normalizer and evidence policy) or as canonical case spans (to
// copy or migrate a dataset).
//
//go:generate mdatagen metadata.yaml
package replayparquetreceiver
