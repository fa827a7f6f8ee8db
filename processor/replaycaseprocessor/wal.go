package replaycaseprocessor

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/s2"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/reprise-dev/reprise/internal/storageclient"
)

// wal is the write-ahead copy of accepted telemetry in a storage extension. Every chunk (one
// trace's part of one request) is stored under its own key before the request is acknowledged,
// and deleted once every case built from it has been taken by the next consumer. On start the
// records left are replayed into the buffers. A nil *wal does nothing.
//
// Keys: "wal/<sequence, 16 hex digits>/<kind>/<trace id hex>", kind "t" (spans) or "l" (log
// events), with "/kafka" appended when the chunk was consumed from Kafka (split_trace.go needs
// to know after a restart); kind "p" is a resume mark of a trace cut at the span limit
// (span_limit_resume.go), its value its own. A chunk's value: the OTLP protobuf of the chunk,
// compressed as an S2 block (Snappy's format, extended; github.com/klauspost/compress/s2).
// Compressing costs a few microseconds a record and makes records 2-3x smaller, so that most
// storage pages a transaction rewrites fit in one page instead of being allocated and copied as
// multi-page runs. The sequence comes first so that new records are appended at the end of the
// storage's B-tree and records written together share pages (with the trace id first, every
// record landed on a page of its own trace and rewrote it). Records of the earlier layout,
// "wal/<trace id hex>/<sequence>" with the kind as the value's first byte, are still read on
// start, before the others (they are older).
type wal struct {
	client storage.Client
	walker storage.Walker
	commit *groupCommit // writes and deletes of concurrent callers share a transaction
	logger *zap.Logger

	mu     sync.Mutex
	seq    uint64
	refs   map[string]int // buffers (cases) still holding a record
	closed *closedMarks   // the stored closes (closed_marks.go)
}

const (
	walPrefix      = "wal/"
	walKafkaSuffix = "/kafka"
)

// remember is how many closes it keeps stored (closed_marks.go): limits.max_open_traces; idBudget
// the bytes of span ids and event keys their marks hold at most; report counts the ids they drop.
func openWAL(ctx context.Context, host component.Host, storageID, owner component.ID, remember int, idBudget int64, report idsTelemetry, logger *zap.Logger) (*wal, error) {
	client, err := storageclient.Open(ctx, host, storageID, component.KindProcessor, owner)
	if err != nil {
		return nil, err
	}
	walker, ok := client.(storage.Walker)
	if !ok {
		_ = client.Close(ctx)
		return nil, fmt.Errorf("storage: extension %q cannot list its keys, so open cases could not be restored; use file_storage", storageID)
	}
	// The sequence starts at the clock so that records written after a restart sort after the
	// ones restored.
	return &wal{
		client: client, walker: walker, logger: logger,
		commit: &groupCommit{client: client, gather: walCommitGather, steadyGap: walCommitSteadyGap, gatherBackoff: walCommitGatherBackoff},
		seq:    uint64(time.Now().UnixNano()), refs: map[string]int{}, closed: newClosedMarks(remember, idBudget, report),
	}, nil
}

func (w *wal) key(kind byte, id pcommon.TraceID, fromKafka bool) string {
	w.mu.Lock()
	w.seq++
	seq := w.seq
	w.mu.Unlock()
	return walKey(seq, kind, id, fromKafka)
}

// walKey formats a record's key, "wal/<sequence, 16 hex digits>/<kind>/<trace id hex>" with
// "/kafka" after it for a chunk from Kafka, in one allocation (fmt boxed every argument).
func walKey(seq uint64, kind byte, id pcommon.TraceID, fromKafka bool) string {
	k := make([]byte, 0, len(walPrefix)+16+3+2*len(id)+len(walKafkaSuffix))
	k = append(k, walPrefix...)
	k = hex.AppendEncode(k, binary.BigEndian.AppendUint64(make([]byte, 0, 8), seq))
	k = append(k, '/', kind, '/')
	k = hex.AppendEncode(k, id[:])
	if fromKafka {
		k = append(k, walKafkaSuffix...)
	}
	return string(k)
}

// writeTraces stores each chunk and gives it its key. An error means nothing may be
// acknowledged: the caller refuses the request with a retryable error.
func (w *wal) writeTraces(ctx context.Context, chunks []*traceChunk) error {
	return writeChunks(ctx, w, chunks, 't', func(c *traceChunk) (*chunkMeta, []byte, error) {
		body, err := otlpTracesMarshaler.MarshalTraces(c.td)
		return &c.chunkMeta, body, err
	})
}

// writeLogs is writeTraces for GenAI log events.
func (w *wal) writeLogs(ctx context.Context, chunks []*logChunk) error {
	return writeChunks(ctx, w, chunks, 'l', func(c *logChunk) (*chunkMeta, []byte, error) {
		body, err := otlpLogsMarshaler.MarshalLogs(c.ld)
		return &c.chunkMeta, body, err
	})
}

// writeChunks stores the encoding of each chunk under a new key of its trace, in one
// transaction (shared with concurrent requests), and records the key and the stored value in
// the chunk. The value is compressed as an open case holds its telemetry (held.go), so that a
// chunk buffering leaves unchanged is held as stored, not encoded twice; the storage only reads
// it.
func writeChunks[C any](ctx context.Context, w *wal, chunks []C, kind byte, encode func(C) (*chunkMeta, []byte, error)) error {
	if w == nil || len(chunks) == 0 {
		return nil
	}
	ops := make([]*storage.Operation, 0, len(chunks))
	for _, c := range chunks {
		m, body, err := encode(c)
		if err == nil {
			m.stored, err = compress(body)
		}
		if err != nil {
			return err
		}
		m.walKeys = []string{w.key(kind, m.id, m.fromKafka)}
		ops = append(ops, storage.SetOperation(m.walKeys[0], m.stored))
	}
	if err := w.commit.batch(ctx, ops...); err != nil {
		return fmt.Errorf("replay_case: writing accepted telemetry to storage failed, refusing it so that the client retries: %w", err)
	}
	return nil
}

// hold records that one more buffer holds each key. A chunk split over several fragments is
// held by each of them, and its record is deleted only when the last one has been sent.
func (w *wal) hold(keys []string) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, k := range keys {
		w.refs[k]++
	}
}

// release drops one hold on each key and deletes the records no buffer holds any more, and
// stores, in the same transaction, the resume marks that a buffer still holds
// (span_limit_resume.go) and a closed mark for each trace whose case is released (closed,
// closed_marks.go). A failed delete is logged: the record is replayed on the next start,
// which can only repeat a case (same case_id), never lose one.
func (w *wal) release(ctx context.Context, keys []string, closed []closedRun, handoff []string, markers ...*walMarker) {
	if w == nil || (len(keys) == 0 && len(closed) == 0 && len(handoff) == 0) {
		return
	}
	var ops []*storage.Operation
	for _, k := range handoff { // the closed marks below take their place (handoff_marks.go)
		ops = append(ops, storage.DeleteOperation(k))
	}
	w.mu.Lock()
	for _, k := range keys {
		if w.refs[k]--; w.refs[k] <= 0 {
			delete(w.refs, k)
			ops = append(ops, storage.DeleteOperation(k))
		}
	}
	for _, m := range markers {
		if w.refs[m.key] > 0 { // else the part that continues was released with this one
			ops = append(ops, storage.SetOperation(m.key, m.value()))
		}
	}
	ops = w.closeOps(ops, closed)
	w.mu.Unlock()
	if len(ops) == 0 {
		return
	}
	if err := w.commit.batch(ctx, ops...); err != nil {
		w.logger.Warn("deleting sent telemetry from storage failed; it will be sent again after a restart", zap.Error(err))
	}
}

// walRecord is one stored chunk read back on start.
type walRecord struct {
	key    string
	kind   byte
	value  []byte
	err    error // the value could not be decompressed
	legacy bool  // stored in the earlier layout, so before every record of the current one
	// fromKafka: the chunk was consumed from Kafka (the key's suffix), which split_trace.go
	// needs to judge the case after a restart.
	fromKafka bool
}

// recordKeys returns the key of every stored chunk in the order it was written (records of the
// earlier layout come first, trace by trace, then by sequence: the order between traces does
// not matter). Only the keys: restore reads the records one at a time (readRecord), so that a
// large write-ahead log is never in memory at once.
func (w *wal) recordKeys(ctx context.Context) ([]string, error) {
	keys, _, _, err := w.listKeys(ctx)
	return keys, err
}

// listKeys returns recordKeys and, in the same walk, the closed marks (closed_marks.go) and
// the hand-off marks (handoff_marks.go), each oldest first.
func (w *wal) listKeys(ctx context.Context) (keys []string, closes []storedClose, handoffs []storedHandoff, err error) {
	err = w.walker.Walk(ctx, func(key string, value []byte) ([]*storage.Operation, error) {
		switch {
		case strings.HasPrefix(key, walPrefix):
			keys = append(keys, key)
		case strings.HasPrefix(key, closedPrefix):
			by, spans, events := readClosedValue(value)
			closes = append(closes, storedClose{key: key, selectedBy: by, spans: spans, events: events})
		case strings.HasPrefix(key, handoffPrefix):
			h := storedHandoff{key: key}
			var ok bool
			if h.mark, ok = parseMarkKey(handoffPrefix, key); !ok {
				h.err = errors.New("not a hand-off mark's key")
			} else if h.err = readHandoffValue(value, &h.run); h.err == nil {
				h.run.id = h.mark.id
			}
			handoffs = append(handoffs, h)
		}
		return nil, nil
	})
	sort.Slice(closes, func(i, j int) bool { return closes[i].key < closes[j].key })
	sort.Slice(handoffs, func(i, j int) bool { return handoffs[i].key < handoffs[j].key })
	sort.Slice(keys, func(i, j int) bool {
		if li, lj := legacyKey(keys[i]), legacyKey(keys[j]); li != lj {
			return li
		}
		return keys[i] < keys[j]
	})
	return keys, closes, handoffs, err
}

// readRecord reads one stored chunk; ok is false when the key holds none (deleted since it was
// listed, or not a record).
func (w *wal) readRecord(ctx context.Context, key string) (r walRecord, ok bool, err error) {
	value, err := w.client.Get(ctx, key)
	if err != nil || value == nil {
		return walRecord{}, false, err
	}
	r, ok = parseRecord(key, value)
	return r, ok, nil
}

// legacyKey tells whether a record's key is of the earlier layout, "wal/<trace id hex>/<sequence>".
func legacyKey(key string) bool {
	kind, _ := currentKey(key)
	return kind == 0
}

// currentKey reads a key of the current layout: its kind, and whether the chunk came from
// Kafka; kind is 0 for any other key.
func currentKey(key string) (kind byte, fromKafka bool) {
	parts, fromKafka := keyParts(key)
	if len(parts) == 3 && len(parts[1]) == 1 {
		return parts[1][0], fromKafka
	}
	return 0, fromKafka
}

// keyParts splits a record's key between its prefix and its Kafka suffix: <sequence>, <kind>,
// <trace id> in the current layout, <trace id>, <sequence> in the earlier one.
func keyParts(key string) (parts []string, fromKafka bool) {
	rest, _ := strings.CutPrefix(key, walPrefix)
	rest, fromKafka = strings.CutSuffix(rest, walKafkaSuffix)
	return strings.Split(rest, "/"), fromKafka
}

// parseRecord reads a stored record of either layout into a slice of its own (the storage owns
// the value only during the walk).
func parseRecord(key string, value []byte) (walRecord, bool) {
	if !strings.HasPrefix(key, walPrefix) {
		return walRecord{}, false
	}
	if kind, fromKafka := currentKey(key); kind != 0 {
		body, err := s2.Decode(nil, value) // a new slice: the storage owns value
		return walRecord{key: key, kind: kind, value: body, err: err, fromKafka: fromKafka}, true
	}
	if len(value) == 0 { // the earlier layout: kind byte, then the protobuf
		return walRecord{}, false
	}
	return walRecord{key: key, kind: value[0], value: append([]byte(nil), value[1:]...), legacy: true}, true
}

func (w *wal) close(ctx context.Context) error {
	if w == nil {
		return nil
	}
	return w.client.Close(ctx)
}

// restore replays the stored chunks into the buffers, as if they had just arrived, so that the
// cases open (or closed but not yet sent) when the process last stopped are built and sent.
func (p *caseProcessor) restore(ctx context.Context) error {
	keys, closes, handoffs, err := p.wal.listKeys(ctx)
	if err != nil {
		return fmt.Errorf("storage: listing stored telemetry: %w", err)
	}
	p.restoreCloses(closes, p.liveHandoffs(ctx, keys, closes, handoffs))
	if err := p.readResumeMarks(ctx, keys); err != nil {
		return err
	}
	var spans, events, recs int
	for _, key := range keys {
		if kind, _ := currentKey(key); kind == 'p' {
			continue // read above
		}
		r, ok, err := p.wal.readRecord(ctx, key)
		if err != nil {
			return fmt.Errorf("storage: reading stored telemetry %s: %w", key, err)
		}
		if !ok {
			continue
		}
		recs++
		if r.err != nil {
			p.dropStoredRecord(ctx, r, "decompress_error", r.err)
			continue
		}
		switch r.kind {
		case 't':
			td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(r.value)
			if err != nil {
				p.dropStoredRecord(ctx, r, "decode_error", err)
				continue
			}
			spans += td.SpanCount()
			chunks := splitTraces(td)
			for _, c := range chunks {
				c.walKeys, c.fromKafka, c.restored = []string{r.key}, r.fromKafka, true
			}
			p.scrubTraceChunks(chunks, true) // an earlier version stored them unscrubbed
			// The spans of a case whose hand-off a kill interrupted go back into that closed
			// case (handoff_marks.go); then those a resume mark says were sent are left out.
			took := p.takeHandedOffSpans(chunks)
			if chunks = p.leaveOutSent(chunks); len(chunks) == 0 {
				if !took {
					p.wal.release(ctx, []string{r.key}, nil, nil) // every span of it was sent
				}
				continue
			}
			p.bufferTraces(chunks)
		case 'l':
			ld, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(r.value)
			if err != nil {
				p.dropStoredRecord(ctx, r, "decode_error", err)
				continue
			}
			events += ld.LogRecordCount()
			chunks := splitLogs(ld, false)
			for _, c := range chunks {
				c.walKeys, c.fromKafka, c.restored = []string{r.key}, r.fromKafka, true
			}
			p.scrubLogChunks(chunks, true)
			took := p.takeHandedOffEvents(chunks)
			left := chunks[:0]
			for _, c := range chunks {
				if c.ld.LogRecordCount() > 0 {
					left = append(left, c)
				}
			}
			if len(left) == 0 && took {
				continue
			}
			p.bufferLogs(left)
		default: // written by another build (a downgrade), or damaged
			p.dropStoredRecord(ctx, r, "unknown_kind", fmt.Errorf("record kind %q is not one this build reads", r.kind))
		}
		p.drainIfDue(ctx)
	}
	handedOff := p.closeHandedOff(ctx)
	p.mu.Lock()
	unheld := p.unheldMarks()
	p.mu.Unlock()
	p.wal.release(ctx, unheld, nil, nil)
	if handedOff {
		_ = p.drain(ctx) // at once: a refusal keeps them, as any batch
	}
	if recs > 0 {
		p.logger.Info("restored buffered telemetry from storage", zap.Int("records", recs), zap.Int("spans", spans), zap.Int("events", events))
	}
	return nil
}

// dropStoredRecord counts and logs, unsampled, with its key and trace id, a stored record that
// restore cannot read: the spans or events it holds were acknowledged and are in no case. The
// record is left in storage for an operator (it is counted again at each start); deleting it
// would destroy the only copy.
func (p *caseProcessor) dropStoredRecord(ctx context.Context, r walRecord, reason string, err error) {
	p.telemetry.ProcessorReplayCaseDroppedStoredRecords.Add(ctx, 1, metric.WithAttributes(attribute.String("reason", reason)))
	p.dropLog.Warn("stored record dropped: it cannot be restored; it is left in storage",
		zap.String("key", r.key), zap.String("trace_id", recordTraceID(r.key)), zap.String("reason", reason), zap.Error(err))
}

// recordTraceID is the trace id (hex) a record's key names, in either layout; "" when it names
// none.
func recordTraceID(key string) string {
	switch parts, _ := keyParts(key); {
	case len(parts) == 3: // wal/<sequence>/<kind>/<trace id>
		return parts[2]
	case len(parts) == 2: // the earlier layout: wal/<trace id>/<sequence>
		return parts[0]
	}
	return ""
}
