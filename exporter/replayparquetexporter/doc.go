// Package replayparquetexporter implements the replay_parquet exporter: it writes the replay
// cases emitted by the replay_case processor to Hive-partitioned Parquet datasets (cases/,
// steps/, quarantine/) that pandas, DuckDB, Polars and Spark open with no options.
//
//go:generate mdatagen metadata.yaml
package replayparquetexporter
