package scrub

import (
	"encoding/base64"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"
)

// span is one finding in a string: bytes [start, end) are of the given kind.
type span struct {
	start, end int
	kind       string
	personal   bool // at the same start a credential finding wins (a URL's password before an e-mail-like tail)
}

// placeholderPattern finds placeholders already in a text, so scrubbing is idempotent.
var placeholderPattern = regexp.MustCompile(`<secret:[a-z0-9_]+:[0-9a-f]{12}>`)

// maxDecodeDepth bounds base64 inside base64.
const maxDecodeDepth = 2

// spans runs every detector over v and returns the findings, sorted and with overlaps merged;
// an existing placeholder is left as it is.
func (s *Scrubber) spans(v string, depth int) []span {
	var found []span
	digits := countDigits(v)
	found = append(found, s.assignmentSpans(v)...)
	for i := range s.detectors {
		found = append(found, s.detectorSpans(&s.detectors[i], v, digits)...)
	}
	found = append(found, s.gitleaksSpans(v)...)
	if depth < maxDecodeDepth {
		found = append(found, s.base64Spans(v, depth)...)
	}
	if len(found) == 0 {
		return nil
	}
	for _, p := range placeholderPattern.FindAllStringIndex(v, -1) {
		found = append(found, span{start: p[0], end: p[1]}) // kind "" keeps the placeholder
	}
	// Stable: at equal position and length the earlier detector (its kind) wins.
	sort.SliceStable(found, func(i, j int) bool {
		if found[i].start != found[j].start {
			return found[i].start < found[j].start
		}
		if (found[i].kind == "") != (found[j].kind == "") {
			return found[i].kind == "" // an existing placeholder stays as it is
		}
		if found[i].personal != found[j].personal {
			return !found[i].personal
		}
		return found[i].end-found[i].start > found[j].end-found[j].start
	})
	// Overlapping findings are merged into one (never dropped: their union is masked).
	out := found[:1]
	for _, f := range found[1:] {
		last := &out[len(out)-1]
		if f.start >= last.end {
			out = append(out, f)
			continue
		}
		if f.end > last.end {
			last.end = f.end
			if last.kind == "" {
				last.kind = f.kind // a finding reaching past a placeholder: mask the whole
			}
		}
	}
	kept := out[:0]
	for _, f := range out {
		if f.kind != "" && f.end > f.start {
			kept = append(kept, f)
		}
	}
	return kept
}

func (s *Scrubber) detectorSpans(d *detector, v string, digits int) []span {
	if !d.mayMatch(v, digits) {
		return nil
	}
	var out []span
	for _, m := range d.re.FindAllStringSubmatchIndex(v, -1) {
		start, end := m[0], m[1]
		if d.group > 0 {
			if len(m) <= 2*d.group+1 || m[2*d.group] < 0 {
				continue
			}
			start, end = m[2*d.group], m[2*d.group+1]
		}
		if start == end || (d.valid != nil && !d.valid(v[start:end])) || (d.near != nil && !d.near(v[:start])) {
			continue
		}
		out = append(out, span{start: start, end: end, kind: d.kind, personal: d.personal})
	}
	return out
}

// gitleaksSpans reports every occurrence of each secret gitleaks finds (it reports the secret,
// not its offset).
func (s *Scrubber) gitleaksSpans(v string) []span {
	if s.gitleaks == nil || len(v) < 8 {
		return nil
	}
	var out []span
	for _, f := range s.gitleaks.DetectString(v) {
		secret := strings.Trim(f.Secret, "\n")
		if len(secret) < 4 {
			continue
		}
		kind := gitleaksKind(f.RuleID)
		for from := 0; ; {
			i := strings.Index(v[from:], secret)
			if i < 0 {
				break
			}
			out = append(out, span{start: from + i, end: from + i + len(secret), kind: kind})
			from += i + len(secret)
		}
	}
	return out
}

// base64Token: a run long enough to hide a credential once encoded.
var base64Token = regexp.MustCompile(`[A-Za-z0-9+/_-]{24,}={0,2}`)

// base64Spans decodes base64 runs that turn into text and scans that text: when it holds a
// finding, the whole encoded run is masked (with the kind of the first finding inside).
func (s *Scrubber) base64Spans(v string, depth int) []span {
	var out []span
	for _, m := range base64Token.FindAllStringIndex(v, -1) {
		decoded, ok := decodeBase64Text(v[m[0]:m[1]])
		if !ok {
			continue
		}
		if inner := s.spans(decoded, depth+1); len(inner) > 0 {
			out = append(out, span{start: m[0], end: m[1], kind: inner[0].kind})
		}
	}
	return out
}

// decodeBase64Text decodes standard or URL-safe base64, padded or not, and accepts the result
// only if it is printable UTF-8 text.
func decodeBase64Text(t string) (string, bool) {
	trimmed := strings.TrimRight(t, "=")
	var b []byte
	var err error
	if strings.ContainsAny(trimmed, "-_") {
		b, err = base64.RawURLEncoding.DecodeString(trimmed)
	} else {
		b, err = base64.RawStdEncoding.DecodeString(trimmed)
	}
	if err != nil || !utf8.Valid(b) {
		return "", false
	}
	for _, r := range string(b) {
		if r < 0x20 && r != '\n' && r != '\r' && r != '\t' {
			return "", false
		}
	}
	return string(b), true
}

// replace writes v with each span replaced by its placeholder, and counts them.
func (s *Scrubber) replace(v string, found []span, r *Report) string {
	var b strings.Builder
	last := 0
	for _, f := range found {
		b.WriteString(v[last:f.start])
		b.WriteString(s.placeholder(f.kind, v[f.start:f.end]))
		r.found(f.kind, s.actions[f.kind])
		last = f.end
	}
	b.WriteString(v[last:])
	return b.String()
}
