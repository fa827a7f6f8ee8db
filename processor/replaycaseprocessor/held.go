package replaycaseprocessor

import (
	"bytes"
	"errors"
	"fmt"
	"sync"

	"github.com/klauspost/compress/s2"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// heldTelemetry is what an open case has been given, as OTLP protobuf compressed as S2 blocks
// (Snappy's format, extended): the encoding of each part (a TracesData or LogsData message) in
// the order it arrived. Nothing reads an open case until it closes, and pdata is two to three
// times larger than its encoding and made of pointers the garbage collector scans on every
// cycle, so an open case holds the encoding and is decoded once, when its case is built
// (decode). Compressing costs microseconds a part and halves the encoding again: an agent's
// spans repeat the conversation each model call is given.
//
// Each part is kept in a slice of exactly its size, rather than appended to one slice, which
// would leave up to half of that slice unused.
type heldTelemetry struct {
	spans  [][]byte
	events [][]byte
	err    error // a part that could not be encoded: decode reports it, and the run is dropped
}

// runTelemetry is a closed case's telemetry, decoded from its heldTelemetry. decode is the only
// way to obtain it, so nothing can read the telemetry of a case that is still open.
type runTelemetry struct {
	spans  ptrace.Traces
	events plog.Logs
}

var (
	otlpTracesMarshaler   ptrace.ProtoMarshaler
	otlpLogsMarshaler     plog.ProtoMarshaler
	heldTracesUnmarshaler ptrace.ProtoUnmarshaler
	heldLogsUnmarshaler   plog.ProtoUnmarshaler
)

// addTraces appends the encoding of td and returns the heap it takes. stored is td's encoding
// as its write-ahead record holds it, compressed as a part is (chunkMeta.stored), or nil: when
// given, it is held as it is instead of encoding td again.
func (h *heldTelemetry) addTraces(td ptrace.Traces, stored []byte) int64 {
	if stored != nil {
		return keepPart(&h.spans, stored)
	}
	enc, err := otlpTracesMarshaler.MarshalTraces(td)
	return h.add(&h.spans, enc, err)
}

// addLogs is addTraces for log events.
func (h *heldTelemetry) addLogs(ld plog.Logs, stored []byte) int64 {
	if stored != nil {
		return keepPart(&h.events, stored)
	}
	enc, err := otlpLogsMarshaler.MarshalLogs(ld)
	return h.add(&h.events, enc, err)
}

// sliceHeader is the heap a held encoding's entry in its [][]byte takes.
const sliceHeader = 24

// add appends a part's encoding, compressed, to parts, unless it is empty (no resource at
// all: decoding it gives nothing either), and returns the heap added: the compressed part's
// capacity and its entry in parts (the slice of entries grows like any append, by up to twice
// its length). A part that could not be encoded is remembered in h.err.
func (h *heldTelemetry) add(parts *[][]byte, enc []byte, err error) int64 {
	if err == nil && len(enc) > 0 {
		var part []byte
		if part, err = compress(enc); err == nil {
			return keepPart(parts, part)
		}
	}
	if err != nil {
		h.err = errors.Join(h.err, fmt.Errorf("encoding a part to hold: %w", err))
	}
	return 0
}

// keepPart appends a compressed part to parts and returns the heap added.
func keepPart(parts *[][]byte, part []byte) int64 {
	before := cap(*parts)
	*parts = append(*parts, part)
	return int64(cap(part)) + int64(cap(*parts)-before)*sliceHeader
}

// scratch holds the buffers S2 compresses into: a block needs room for its worst case, far
// more than it usually takes, so it is written to scratch and copied out at its size. The
// write-ahead storage stores chunks in the same form (wal.go), so that an unchanged chunk is
// held as stored. decodeParts decompresses into the same buffers.
var scratch = sync.Pool{New: func() any { return new([]byte) }}

// scratchOf takes a scratch buffer of at least n bytes; the caller puts it back.
func scratchOf(n int) *[]byte {
	buf := scratch.Get().(*[]byte)
	if cap(*buf) < n {
		*buf = make([]byte, n)
	}
	return buf
}

func compress(enc []byte) ([]byte, error) {
	n := s2.MaxEncodedLen(len(enc))
	if n < 0 {
		return nil, fmt.Errorf("%d bytes is more than an S2 block holds", len(enc))
	}
	buf := scratchOf(n)
	defer scratch.Put(buf)
	return bytes.Clone(s2.Encode((*buf)[:cap(*buf)], enc)), nil
}

// decode restores the telemetry in the order it was added and empties h. The encodings of
// several TracesData (LogsData) messages one after the other are themselves one valid message:
// protobuf appends to a repeated field (resource_spans, resource_logs) each time it occurs, so
// one Unmarshal of the decompressed parts, concatenated, returns every part's resources in
// order.
func (h *heldTelemetry) decode() (runTelemetry, error) {
	spans, events, failed := h.spans, h.events, h.err
	h.spans, h.events, h.err = nil, nil, nil
	if failed != nil {
		return runTelemetry{}, failed
	}
	run := runTelemetry{spans: ptrace.NewTraces(), events: plog.NewLogs()}
	var err error
	if len(spans) > 0 {
		if run.spans, err = decodeParts(spans, heldTracesUnmarshaler.UnmarshalTraces); err != nil {
			return runTelemetry{}, fmt.Errorf("decoding the held spans: %w", err)
		}
	}
	if len(events) > 0 {
		if run.events, err = decodeParts(events, heldLogsUnmarshaler.UnmarshalLogs); err != nil {
			return runTelemetry{}, fmt.Errorf("decoding the held log events: %w", err)
		}
	}
	return run, nil
}

// decodeParts decompresses the parts one after the other into one slice and unmarshals it.
// The slice is a scratch buffer: pdata's unmarshalling copies every string and byte value out
// of its input, so nothing decoded refers to it once unmarshal returns.
func decodeParts[T any](parts [][]byte, unmarshal func([]byte) (T, error)) (T, error) {
	var none T
	sizes := make([]int, len(parts))
	total := 0
	for i, p := range parts {
		n, err := s2.DecodedLen(p)
		if err != nil {
			return none, err
		}
		sizes[i], total = n, total+n
	}
	buf := scratchOf(total)
	defer scratch.Put(buf)
	enc := (*buf)[:total]
	at := 0
	for i, p := range parts {
		if _, err := s2.Decode(enc[at:at+sizes[i]], p); err != nil {
			return none, err
		}
		at += sizes[i]
	}
	return unmarshal(enc)
}
