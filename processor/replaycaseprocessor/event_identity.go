package replaycaseprocessor

import (
	"cmp"
	"encoding/binary"
	"hash"
	"hash/fnv"
	"math"
	"slices"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
)

// eventKey identifies a log event within its trace.
type eventKey [16]byte

// eventIdentity is a hash of what makes a log event the same event when a client sends it
// again: its span id, timestamp, event name, severity, body and attributes (in order). Two
// events equal in all of these carry the same information, so keeping one loses nothing.
//
// Values are hashed by their structure, not as text: marshalling a map body to JSON for every
// event cost time and allocations on the intake path (BenchmarkEventIdentity measures this
// one). Every piece is written with its type and length, so different events never write the
// same bytes; a map's entries are hashed in key order, as the JSON text sorted them.
func eventIdentity(lr plog.LogRecord) eventKey {
	h := &valueHasher{h: fnv.New128a()}
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
	var k eventKey
	h.flush()
	h.h.Sum(k[:0])
	return k
}

// valueHasher writes pdata values into a hash without ambiguity. It gathers what it writes in
// buf: one Write per string would copy each into a new []byte.
type valueHasher struct {
	h   hash.Hash
	buf [128]byte
	n   int // bytes in buf
}

func (v *valueHasher) flush() {
	v.h.Write(v.buf[:v.n])
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
		entries := make([]entry, 0, m.Len())
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
