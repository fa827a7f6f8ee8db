package replayparquetreceiver

import (
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/reprise-dev/reprise/dataset"
)

// Provenance of a re-driven case. In emit: raw the receiver puts these resource attributes on
// the raw spans and events, and the replay_case processor copies them into the new row's
// metadata when its config maps them (README); in emit: cases it writes the metadata keys
// directly. They are outside replay.*, which the processor removes from incoming telemetry.
const (
	// AttrRedrivenFrom names the row the case was read from: "<dataset>/dt=<day>/<file>#<row>".
	AttrRedrivenFrom = "reprise.redriven_from"
	// AttrOriginalIngestedAt is when the case was first written (RFC 3339, UTC): the time in
	// the UUIDv7 name of the first file that held it, carried over by every later re-drive.
	AttrOriginalIngestedAt = "reprise.original_ingested_at"

	MetaRedrivenFrom = dataset.MetaRedrivenFrom // the exporter tells a copy of a row from a copy of another by it

	MetaOriginalIngestedAt = "original_ingested_at"
)

// source is where a case row was read.
type source struct {
	rel        string // path under the dataset root, slash-separated
	ingestedAt string // from the file name, RFC 3339
}

// sourceOf names a file by its path under the dataset root, the same whether the root is a local
// directory or a bucket prefix, so that checkpoints and provenance do not depend on where the
// dataset is read.
func sourceOf(f dataset.File) source {
	name := path.Base(filepath.ToSlash(f.Path))
	return source{rel: f.Dataset + "/" + dataset.PartitionKey + "=" + f.Partition + "/" + name, ingestedAt: fileTime(name)}
}

// fileTime is the creation time in a "part-<uuidv7>.<codec>.parquet" name (a UUIDv7 starts
// with its Unix milliseconds), or "" when the name holds none.
func fileTime(name string) string {
	s, _, _ := strings.Cut(strings.TrimPrefix(name, "part-"), ".")
	id, err := uuid.Parse(s)
	if err != nil || id.Version() != 7 {
		return ""
	}
	sec, nsec := id.Time().UnixTime()
	return time.Unix(sec, nsec).UTC().Format(time.RFC3339Nano)
}
