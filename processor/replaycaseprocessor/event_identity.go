package replaycaseprocessor

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"math"
	"slices"
	"sync"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
)

// eventKey identifies a log event within its trace: the first 16 bytes of a SHA-256 of what
// makes it the same event (eventIdentity).
type eventKey [16]byte

// Why a cryptographic hash, and not a seeded one: the keys of a closed case's events are stored
// in its closed mark (closed_marks.go) and compared with the keys of events redelivered after a
// restart, so a key must be the same in every process and every Go version. hash/maphash (used
// before, with a per-process seed) is neither. The seed was there so that a client could not
// craft two different events with one key, one of which would then be dropped as a duplicate;
// finding two events with one 128-bit truncated SHA-256 takes about 2^64 hashes, so no secret
// is needed, and none has to be kept in storage and read back before the marks. Measured with
// BenchmarkEventIdentity against the seeded maphash (README, Duplicates).

// hashers reuse a digest and its buffers: nothing is allocated per event.
var hashers = sync.Pool{New: func() any { return &valueHasher{d: sha256.New()} }}

// eventIdentity is a hash of what makes a log event the same event when a client sends it
// again: its span id, timestamp, event name, severity, body and attributes (in order). Two
// events equal in all of these carry the same information, so keeping one loses nothing.
//
// Values are hashed by their structure, not as text: marshalling a map body to JSON for every
// event cost time and allocations on the intake path (BenchmarkEventIdentity measures this
// one). Every piece is written with its type and length, so different events never write the
// same bytes; a map's entries are hashed in key order, as the JSON text sorted them.
func eventIdentity(lr plog.LogRecord) eventKey {
	h := hashers.Get().(*valueHasher)
	defer hashers.Put(h)
	h.d.Reset()
	sid := lr.SpanID()
	h.write(sid[:])
	h.uint(uint64(lr.Timestamp()))
	h.uint(uint64(lr.SeverityNumber()))
	h.str(lr.EventName())
	h.str(lr.SeverityText())
	h.value(lr.Body())
	h.uint(uint64(lr.Attributes().Len()))
	for k, v := range lr.Attributes().All() {
		h.str(k)
		h.value(v)
	}
	h.flush()
	var k eventKey
	copy(k[:], h.d.Sum(h.sum[:0]))
	return k
}

// compareEventKeys orders event keys (the remembered ones are sorted, closed_spans.go).
func compareEventKeys(a, b eventKey) int { return bytes.Compare(a[:], b[:]) }

// valueHasher writes pdata values into a hash without ambiguity. It gathers what it writes in
// buf: a Write per piece through the hash.Hash interface would copy each string into a new
// []byte.
type valueHasher struct {
	d   hash.Hash
	buf [512]byte
	n   int // bytes in buf
	sum [sha256.Size]byte
}

func (v *valueHasher) flush() {
	v.d.Write(v.buf[:v.n])
	v.n = 0
}

func (v *valueHasher) write(b []byte)       { writeBytes(v, b) }
func (v *valueHasher) writeString(s string) { writeBytes(v, s) }

// writeBytes copies b into v.buf, flushing it whenever it is full.
func writeBytes[B string | []byte](v *valueHasher, b B) {
	for len(b) > 0 {
		if v.n == len(v.buf) {
			v.flush()
		}
		c := copy(v.buf[v.n:], b)
		v.n += c
		b = b[c:]
	}
}

func (v *valueHasher) uint(n uint64) {
	var num [binary.MaxVarintLen64]byte
	v.write(binary.AppendUvarint(num[:0], n))
}

func (v *valueHasher) str(s string) {
	v.uint(uint64(len(s)))
	v.writeString(s)
}

func (v *valueHasher) value(val pcommon.Value) {
	v.uint(uint64(val.Type()))
	switch val.Type() {
	case pcommon.ValueTypeStr:
		v.str(val.Str())
	case pcommon.ValueTypeInt:
		v.uint(uint64(val.Int()))
	case pcommon.ValueTypeDouble:
		v.uint(math.Float64bits(val.Double()))
	case pcommon.ValueTypeBool:
		if val.Bool() {
			v.uint(1)
		} else {
			v.uint(0)
		}
	case pcommon.ValueTypeBytes:
		b := val.Bytes().AsRaw()
		v.uint(uint64(len(b)))
		v.write(b)
	case pcommon.ValueTypeSlice:
		s := val.Slice()
		v.uint(uint64(s.Len()))
		for i := range s.Len() {
			v.value(s.At(i))
		}
	case pcommon.ValueTypeMap:
		type entry struct {
			k string
			v pcommon.Value
		}
		m := val.Map()
		var small [16]entry // bodies have a few keys: sorted on the stack
		entries := small[:0]
		for k, e := range m.All() {
			entries = append(entries, entry{k, e})
		}
		slices.SortFunc(entries, func(a, b entry) int { return cmp.Compare(a.k, b.k) })
		v.uint(uint64(len(entries)))
		for _, e := range entries {
			v.str(e.k)
			v.value(e.v)
		}
	}
}
