package replaycaseprocessor

import (
	"fmt"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// heldTelemetry is what an open case has been given, as OTLP protobuf: the encoding of each
// part (a TracesData or LogsData message) in the order it arrived. Nothing reads an open case
// until it closes, and pdata is about three times larger than its encoding and made of
// pointers the garbage collector scans on every cycle, so an open case holds the encoding and
// is decoded once, when its case is built (decode).
//
// Each part's encoding is kept as the marshaler returns it (exactly its size), rather than
// appended to one slice, which would copy it and leave up to half of the slice unused.
type heldTelemetry struct {
	spans  [][]byte
	events [][]byte
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

// addTraces appends the encoding of td and returns the heap it takes.
func (h *heldTelemetry) addTraces(td ptrace.Traces) int64 {
	// ProtoMarshaler sizes its buffer before writing and never fails (pdata v1.71).
	enc, _ := otlpTracesMarshaler.MarshalTraces(td)
	return h.add(&h.spans, enc)
}

// addLogs appends the encoding of ld and returns the heap it takes.
func (h *heldTelemetry) addLogs(ld plog.Logs) int64 {
	enc, _ := otlpLogsMarshaler.MarshalLogs(ld)
	return h.add(&h.events, enc)
}

// sliceHeader is the heap a held encoding's entry in its [][]byte takes.
const sliceHeader = 24

// add appends a part's encoding to parts, unless it is empty (no resource at all: decoding it
// gives nothing either), and returns the heap added: the encoding's capacity and its entry in
// parts (the slice of entries grows like any append, by up to twice its length).
func (h *heldTelemetry) add(parts *[][]byte, enc []byte) int64 {
	if len(enc) == 0 {
		return 0
	}
	before := cap(*parts)
	*parts = append(*parts, enc)
	return int64(cap(enc)) + int64(cap(*parts)-before)*sliceHeader
}

// decode restores the telemetry in the order it was added and empties h. The encodings of
// several TracesData (LogsData) messages one after the other are themselves one valid message:
// protobuf appends to a repeated field (resource_spans, resource_logs) each time it occurs, so
// one Unmarshal of the concatenation returns every part's resources in order.
func (h *heldTelemetry) decode() (runTelemetry, error) {
	spans, events := h.spans, h.events
	h.spans, h.events = nil, nil
	run := runTelemetry{spans: ptrace.NewTraces(), events: plog.NewLogs()}
	var err error
	if len(spans) > 0 {
		if run.spans, err = heldTracesUnmarshaler.UnmarshalTraces(concat(spans)); err != nil {
			return runTelemetry{}, fmt.Errorf("decoding the held spans: %w", err)
		}
	}
	if len(events) > 0 {
		if run.events, err = heldLogsUnmarshaler.UnmarshalLogs(concat(events)); err != nil {
			return runTelemetry{}, fmt.Errorf("decoding the held log events: %w", err)
		}
	}
	return run, nil
}

func concat(parts [][]byte) []byte {
	if len(parts) == 1 {
		return parts[0]
	}
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	out := make([]byte, 0, n)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}
