package scrub

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unsafe"

	"github.com/go-json-experiment/json/jsontext"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/reprise-dev/reprise/internal/jsonany"
)

// Text scrubs one string. When the whole string is a JSON object or array, the JSON is walked
// (keys and values, including JSON nested in its strings) and written back only if something
// changed; otherwise the detectors run over the text, which also finds `name: value` pairs of
// JSON, NDJSON or Python dicts embedded in prose, query strings, DSNs and base64 that decodes
// to text.
func (s *Scrubber) Text(v string, r *Report) string {
	if s == nil || v == "" {
		return v
	}
	if len(v) <= maxCachedLen || len(v) > maxLongCachedLen {
		return s.text(v, r) // short strings are cached by plain
	}
	// Hashed in place (sha256 only reads it), not copied: these strings are kilobytes long.
	sum := sha256.Sum256(unsafe.Slice(unsafe.StringData(v), len(v)))
	if s.longClean.has(sum) {
		return v
	}
	var sub Report
	out := s.text(v, &sub)
	if out == v && len(sub.Counts) == 0 {
		s.longClean.add(sum)
	}
	merge(r, &sub)
	return out
}

// text is Text without the cache of long clean strings.
func (s *Scrubber) text(v string, r *Report) string {
	if !jsonShaped(v) {
		return s.plain(v, r)
	}
	if parsed, ok := wholeJSON(strings.TrimSpace(v)); ok {
		if out, ok := s.wholeJSONText(v, parsed, r); ok {
			return out
		}
		return s.plain(v, r)
	}
	// Text shaped like JSON that is not JSON until a value is masked (a control character or
	// a bad escape in a string: {"pAssword:\x00":[0]}, where `pAssword:` names the \x00) is
	// walked as JSON once it is: the next scrub of the output walks it, and reads more than the
	// text rules did (the key `pAssword:<secret:…>` names its value [0]; a list of lists under
	// a secret name), so scrubbing would not be idempotent. The first pass already does what
	// the second would: the JSON reading is the safer one, and the one every later pass takes.
	// Only text shaped like JSON in which something was masked is parsed again.
	out := s.plain(v, r)
	if out != v && jsonShaped(out) {
		if parsed, ok := wholeJSON(strings.TrimSpace(out)); ok {
			if walked, ok := s.wholeJSONText(out, parsed, r); ok {
				return walked
			}
		}
	}
	return out
}

// jsonShaped: v, spaces around it aside, opens with '{' or '[' and is longer than one byte.
func jsonShaped(v string) bool {
	t := strings.TrimSpace(v)
	return len(t) > 1 && (t[0] == '{' || t[0] == '[')
}

// wholeJSONText scrubs v, whose text is the whole JSON value parsed, by walking it: v when
// nothing is found, else the scrubbed value written back; false when it cannot be written.
func (s *Scrubber) wholeJSONText(v string, parsed any, r *Report) (string, bool) {
	var sub Report
	out := s.JSON(parsed, &sub)
	if secrets := s.contextSecrets(out); len(secrets) > 0 { // context.go
		out = s.maskSecrets(out, secrets, &sub)
	}
	if len(sub.Counts) == 0 {
		return v, true
	}
	text, err := jsonany.Marshal(out)
	if err != nil {
		return "", false
	}
	merge(r, &sub)
	return text, true
}

// wholeJSON parses t, which has no whitespace around it, when the whole of t is one JSON value
// (`[]} sk-…` is text that starts with JSON); numbers stay json.Number, so that they are
// written back as they were. jsonany decodes it when it can, with the same result as
// encoding/json; otherwise wholeJSONStd decides. JSON that gives an object's name twice is not
// taken: its value keeps only the last of them, and a text found clean through the value would
// be kept with the others unscanned ({"note":"sk-…","note":"hi"}); it is scanned as text.
func wholeJSON(t string) (any, bool) {
	v, duplicates, ok := jsonany.DecodeWithDuplicates(t)
	switch {
	case duplicates:
		return nil, false
	case ok:
		return v, true
	}
	if v, ok := wholeJSONStd(t); ok && !hasDuplicateNames(t) {
		return v, true
	}
	return nil, false
}

// hasDuplicateNames tells whether an object in t, JSON that jsonany could not decode (invalid
// UTF-8, say), gives a name twice: jsontext rejects that unless told otherwise.
func hasDuplicateNames(t string) bool {
	var se *jsontext.SyntacticError
	err := jsontext.NewDecoder(strings.NewReader(t), jsontext.AllowInvalidUTF8(true)).SkipValue()
	return errors.As(err, &se) && se.Err == jsontext.ErrDuplicateName
}

// wholeJSONStd is wholeJSON with encoding/json alone: the fallback, and the reference the fuzz
// test compares wholeJSON with.
func wholeJSONStd(t string) (any, bool) {
	var parsed any
	dec := json.NewDecoder(strings.NewReader(t))
	dec.UseNumber()
	if dec.Decode(&parsed) != nil || strings.TrimSpace(t[dec.InputOffset():]) != "" {
		return nil, false
	}
	return parsed, true
}

// plain scrubs a string as text, without looking for JSON: also used for keys and names.
func (s *Scrubber) plain(v string, r *Report) string {
	if s.clean.has(v) {
		return v
	}
	found := s.foldedSpans(v, 0)
	if len(found) == 0 {
		s.clean.add(v)
		return v
	}
	return s.replace(v, found, r)
}

// integer scrubs a number written as decimal text: only whole numbers (a card or phone number
// is written as an integer; the digits of 0.029032467 in an embedding are not a phone number).
func (s *Scrubber) integer(n string, r *Report) string {
	if len(n) < 7 || strings.ContainsAny(n, ".eE") {
		return n
	}
	return s.plain(n, r)
}

// secretValue masks a whole value found under a secret key.
func (s *Scrubber) secretValue(kind, value string, r *Report) string {
	if value == "" || s.isPlaceholder(value) {
		return value
	}
	r.found(kind, s.actions[kind])
	return s.placeholder(kind, value)
}

// JSON scrubs a decoded JSON value (maps, slices, strings, json.Number, numbers) and returns
// it: keys are scrubbed like values (an e-mail address used as a key), values under secret
// keys are masked whole, numbers are checked as text (a card number written as a number).
func (s *Scrubber) JSON(v any, r *Report) any {
	if s == nil {
		return v
	}
	switch t := v.(type) {
	case string:
		return s.Text(t, r)
	case json.Number:
		if out := s.integer(string(t), r); out != string(t) {
			return out
		}
		return t
	case float64:
		n := strconv.FormatFloat(t, 'f', -1, 64)
		if out := s.integer(n, r); out != n {
			return out
		}
		return t
	case []any:
		for i := range t {
			t[i] = s.JSON(t[i], r)
		}
		s.splitList(t, r)
		return t
	case map[string]any:
		var keyBuf, siblingBuf [smallObject]string // on the stack for the objects most texts hold
		keys, siblings := keyBuf[:0], siblingBuf[:0]
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys) // a fixed order, for the split-secret check below
		// A cookie jar's {"name": "sessionid", "value": …} (cookiejar.go).
		cookieValue, cookieKind := s.jsonCookie(t)
		for _, k := range keys {
			val := t[k]
			str, _ := val.(string)
			nk := s.plain(k, r)
			if jar, ok := val.(map[string]any); ok && cookieJarName(k) {
				s.jsonJar(jar, r) // {"cookies": {"sessionid": "…"}} (cookiejar.go)
			}
			if kind := s.valueKind(k, nk, str, cookieValue, cookieKind); kind != "" {
				val = s.secretJSON(kind, val, r)
			} else {
				s.keyMaterialList(k, val, r) // {"signing_key": ["MIIJKQ…"]} (context.go)
				val = s.JSON(val, r)
			}
			if nk != k {
				delete(t, k)
				k = nk
			}
			t[k] = val
			if _, ok := val.(string); ok {
				siblings = append(siblings, k)
			}
		}
		s.splitJSON(t, siblings, r)
		return t
	}
	return v
}

// valueKind returns the kind under which the value under the key k (str, when it is a string)
// is masked whole, or "" when it is scanned: k's kind (kindOf), the kind of a cookie object's
// value when k is its member cookieValue (cookiejar.go), or that of key material longer than
// the rules read with its name (context.go). A key that scrubbing changes (scrubbed, nk) is
// judged as written and as scrubbed: the next scrub of the output sees only nk, and a public
// name masked with what it was part of leaves a secret one (`token_count@example.com password`
// is no secret name as written, `<secret:email:…> password` is one), so the value is masked in
// the first pass as in the second, and scrubbing is idempotent.
func (s *Scrubber) valueKind(k, scrubbed, str, cookieValue, cookieKind string) string {
	kind := s.kindOf(k)
	if kind == "" && scrubbed != k {
		kind = s.kindOf(scrubbed)
	}
	switch {
	case kind != "":
		return kind
	case cookieKind != "" && k == cookieValue:
		return cookieKind
	case s.longKeyMaterial(k, str):
		return KindSecretField
	}
	return ""
}

// secretJSON masks a value under a secret key: strings and numbers whole, arrays element by
// element, objects walked; booleans and nulls hold no secret and stay.
func (s *Scrubber) secretJSON(kind string, v any, r *Report) any {
	switch t := v.(type) {
	case string, json.Number, float64:
		return s.secretValue(kind, fmt.Sprint(t), r)
	case []any:
		for i := range t {
			t[i] = s.secretJSON(kind, t[i], r)
		}
		return t
	case map[string]any:
		return s.JSON(t, r)
	}
	return v
}

// Value scrubs an attribute value in place, whatever its type: strings; integers and doubles
// as their decimal text (a card number in an int attribute becomes a string placeholder);
// bytes as text; maps and slices recursively.
func (s *Scrubber) Value(v pcommon.Value, r *Report) {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		if out := s.Text(v.Str(), r); out != v.Str() {
			v.SetStr(out)
		}
	case pcommon.ValueTypeInt:
		n := strconv.FormatInt(v.Int(), 10)
		if out := s.integer(n, r); out != n {
			v.SetStr(out)
		}
	case pcommon.ValueTypeDouble:
		n := strconv.FormatFloat(v.Double(), 'f', -1, 64)
		if out := s.integer(n, r); out != n {
			v.SetStr(out)
		}
	case pcommon.ValueTypeBytes:
		raw := string(v.Bytes().AsRaw())
		if out := s.Text(raw, r); out != raw {
			v.SetEmptyBytes().FromRaw([]byte(out))
		}
	case pcommon.ValueTypeMap:
		s.Map(v.Map(), r)
	case pcommon.ValueTypeSlice:
		for i := 0; i < v.Slice().Len(); i++ {
			s.Value(v.Slice().At(i), r)
		}
		s.splitSlice(v.Slice(), r)
	}
}

// secretAttribute masks a value under a secret key: scalars whole, slices element by element,
// maps walked.
func (s *Scrubber) secretAttribute(kind string, v pcommon.Value, r *Report) {
	switch v.Type() {
	case pcommon.ValueTypeStr, pcommon.ValueTypeInt, pcommon.ValueTypeDouble, pcommon.ValueTypeBytes:
		in := v.AsString()
		if out := s.secretValue(kind, in, r); out != in {
			v.SetStr(out)
		}
	case pcommon.ValueTypeSlice:
		for i := 0; i < v.Slice().Len(); i++ {
			s.secretAttribute(kind, v.Slice().At(i), r)
		}
	case pcommon.ValueTypeMap:
		s.Map(v.Map(), r)
	}
}

// Map scrubs attributes in place: keys, values under secret keys entirely, others by
// detection, then secrets split over sibling values.
func (s *Scrubber) Map(m pcommon.Map, r *Report) {
	if s == nil || m.Len() == 0 {
		return
	}
	renamed := false
	cookieValue, cookieKind := s.mapCookie(m) // {name: sessionid, value: …} (cookiejar.go)
	for k, v := range m.All() {
		str := ""
		if v.Type() == pcommon.ValueTypeStr {
			str = v.Str()
		}
		nk := s.plain(k, &Report{}) // counted when renamed
		if v.Type() == pcommon.ValueTypeMap && cookieJarName(k) {
			s.mapJar(v.Map(), r) // cookies: {sessionid: …} (cookiejar.go)
		}
		if kind := s.valueKind(k, nk, str, cookieValue, cookieKind); kind != "" {
			s.secretAttribute(kind, v, r)
		} else {
			s.keyMaterialSlice(k, v, r) // signing_key: [MIIJKQ…] (context.go)
			s.Value(v, r)
		}
		renamed = renamed || nk != k
	}
	if renamed {
		s.renameKeys(m, r)
	}
	s.contextMap(m, r) // context.go
	s.splitMap(m, r)
}

// renameKeys rebuilds m with its keys scrubbed (pcommon.Map has no rename), keeping the order.
func (s *Scrubber) renameKeys(m pcommon.Map, r *Report) {
	out := pcommon.NewMap()
	out.EnsureCapacity(m.Len())
	for k, v := range m.All() {
		v.CopyTo(out.PutEmpty(s.plain(k, r)))
	}
	out.MoveTo(m)
}

// Traces scrubs spans in place: resource and scope attributes and schema URLs, scope names and
// versions, span names, status messages, trace states, span attributes, events (names and
// attributes) and links (trace states and attributes).
func (s *Scrubber) Traces(td ptrace.Traces, r *Report) {
	if s == nil {
		return
	}
	walkTraces(td, func(v string) string { return s.Text(v, r) }, func(m pcommon.Map) { s.Map(m, r) })
}

// walkTraces passes every field of td that Traces scrubs to text (strings, set to what it
// returns) or to attrs (attribute maps).
func walkTraces(td ptrace.Traces, text func(string) string, attrs func(pcommon.Map)) {
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		rs := td.ResourceSpans().At(i)
		attrs(rs.Resource().Attributes())
		rs.SetSchemaUrl(text(rs.SchemaUrl()))
		for j := 0; j < rs.ScopeSpans().Len(); j++ {
			ss := rs.ScopeSpans().At(j)
			walkScope(ss.Scope(), text, attrs)
			ss.SetSchemaUrl(text(ss.SchemaUrl()))
			for k := 0; k < ss.Spans().Len(); k++ {
				sp := ss.Spans().At(k)
				attrs(sp.Attributes())
				sp.SetName(text(sp.Name()))
				sp.Status().SetMessage(text(sp.Status().Message()))
				// Trace state is stored with the span, and its values are free text to a vendor.
				sp.TraceState().FromRaw(text(sp.TraceState().AsRaw()))
				for e := 0; e < sp.Events().Len(); e++ {
					ev := sp.Events().At(e)
					ev.SetName(text(ev.Name()))
					attrs(ev.Attributes())
				}
				for l := 0; l < sp.Links().Len(); l++ {
					ln := sp.Links().At(l)
					ln.TraceState().FromRaw(text(ln.TraceState().AsRaw()))
					attrs(ln.Attributes())
				}
			}
		}
	}
}

func walkScope(sc pcommon.InstrumentationScope, text func(string) string, attrs func(pcommon.Map)) {
	sc.SetName(text(sc.Name()))
	sc.SetVersion(text(sc.Version()))
	attrs(sc.Attributes())
}

// Logs scrubs log records in place: resource and scope (name, version, attributes, schema URL),
// record attributes, event names, severity texts and bodies of any type.
func (s *Scrubber) Logs(ld plog.Logs, r *Report) {
	if s == nil {
		return
	}
	walkLogs(ld, func(v string) string { return s.Text(v, r) }, func(m pcommon.Map) { s.Map(m, r) }, func(v pcommon.Value) { s.Value(v, r) })
}

// walkLogs is walkTraces for the fields of ld that Logs scrubs; body gets the records' bodies.
func walkLogs(ld plog.Logs, text func(string) string, attrs func(pcommon.Map), body func(pcommon.Value)) {
	for i := 0; i < ld.ResourceLogs().Len(); i++ {
		rl := ld.ResourceLogs().At(i)
		attrs(rl.Resource().Attributes())
		rl.SetSchemaUrl(text(rl.SchemaUrl()))
		for j := 0; j < rl.ScopeLogs().Len(); j++ {
			sl := rl.ScopeLogs().At(j)
			walkScope(sl.Scope(), text, attrs)
			sl.SetSchemaUrl(text(sl.SchemaUrl()))
			for k := 0; k < sl.LogRecords().Len(); k++ {
				lr := sl.LogRecords().At(k)
				attrs(lr.Attributes())
				lr.SetEventName(text(lr.EventName()))
				lr.SetSeverityText(text(lr.SeverityText()))
				body(lr.Body())
			}
		}
	}
}
