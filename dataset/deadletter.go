package dataset

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// Dead letters: failed/batch-<key>.otlp.binpb.
//
// When a batch cannot be written (a full disk, an I/O error), the exporter stores what it
// received under failed/ so that the cases are not lost silently while its queue retries:
// each file is one OTLP protobuf TracesData message (the wire form of an OTLP/HTTP
// ExportTraceServiceRequest, ptrace.ProtoMarshaler), holding the batch's case spans in the
// canonical form. Re-drive one by sending it to an OTLP/HTTP traces endpoint whose pipeline
// accepts case spans (a trusted tier) with Content-Type application/x-protobuf, or with the
// replay_parquet receiver. The key is derived from the batch's case ids, so a retry of the same
// batch rewrites the same file, and a retry that succeeds removes it: a file that stays in
// failed/ is a batch whose last attempt failed.

// DeadLetterExt is the extension of dead-letter files.
const DeadLetterExt = ".otlp.binpb"

// DeadLetterKey identifies a batch by its case ids (order does not matter).
func DeadLetterKey(caseIDs []string) string {
	ids := slices.Clone(caseIDs)
	slices.Sort(ids)
	h := sha256.New()
	for _, id := range ids {
		h.Write([]byte(id))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// DeadLetterPath is where the batch with key is dead-lettered.
func (w *Writer) DeadLetterPath(key string) string {
	return filepath.Join(w.cfg.Root, Failed, "batch-"+key+DeadLetterExt)
}

// DeadLetter stores payload as the batch's dead letter (staged, fsynced, renamed, like data
// files) and returns its path. created is false when the file was already there (an earlier
// attempt of the same batch).
func (w *Writer) DeadLetter(key string, payload []byte) (path string, created bool, err error) {
	path = w.DeadLetterPath(key)
	if _, err := os.Stat(path); err == nil {
		return path, false, nil
	}
	tmp := filepath.Join(w.cfg.Staging, "failed-"+key+".tmp")
	if err := writeSynced(tmp, payload); err != nil {
		os.Remove(tmp)
		return path, false, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return path, false, err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return path, false, err
	}
	return path, true, syncDir(filepath.Dir(path))
}

// ClearDeadLetter removes the batch's dead letter, if any: the batch has now been written.
// It reports whether there was one.
func (w *Writer) ClearDeadLetter(key string) (bool, error) {
	err := os.Remove(w.DeadLetterPath(key))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}
