package replaycaseprocessor

import (
	"cmp"
	"encoding/binary"
	"hash/maphash"
	"math"
	"slices"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
)

// eventKey identifies a log event within its trace.
type eventKey uint64

// eventSeed keys every event's hash in this process. Keys are compared only within one
// process (a restart rebuilds them from the write-ahead copy), and a secret seed keeps a client
// from crafting two different events with one key, one of which would then be dropped.
var eventSeed = maphash.MakeSeed()

// eventIdentity is a hash of what makes a log event the same event when a client sends it
// again: its span id, timestamp, event name, severity, body and attributes (in order). Two
// events equal in all of these carry the same information, so keeping one loses nothing.
//
// Values are hashed by their structure, not as text: marshalling a map body to JSON for every
// event cost time and allocations on the intake path (BenchmarkEventIdentity measures this
// one). Every piece is written with its type and length, so different events never write the
// same bytes; a map's entries are hashed in key order, as the JSON text sorted them.
func eventIdentity(lr plog.LogRecord) eventKey {
	var h valueHasher // maphash.Hash is a value that buffers what it is given: nothing escapes
	h.h.SetSeed(eventSeed)
	sid := lr.SpanID()
	h.h.Write(sid[:])
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
	return eventKey(h.h.Sum64())
}

// valueHasher writes pdata values into a hash without ambiguity.
type valueHasher struct {
	h maphash.Hash
}

func (v *valueHasher) uint(n uint64) {
	var num [binary.MaxVarintLen64]byte
	v.h.Write(binary.AppendUvarint(num[:0], n))
}

func (v *valueHasher) str(s string) {
	v.uint(uint64(len(s)))
	v.h.WriteString(s)
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
		v.h.Write(b)
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
