package scrub

import (
	"encoding/base64"
	"regexp"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"
)

// span is one finding in a string: bytes [start, end) are of the given kind.
type span struct {
	start, end int
	kind       string
	personal   bool // at the same start a credential finding wins (a URL's password before an e-mail-like tail)
	// value, when set, is what the placeholder hashes instead of the bytes: a YAML block
	// scalar's value as YAML reads it (blockscalar.go), wrapped key material's with its line
	// breaks read (wrappedkey.go), a triple-quoted string's in a JSON string with its escapes
	// decoded (pystring.go). A merge that widens the span drops it.
	value string
}

// hashed is what the placeholder of f in v hashes.
func (f span) hashed(v string) string {
	if f.value != "" {
		return f.value
	}
	return v[f.start:f.end]
}

// placeholderPattern finds placeholders already in a text, so scrubbing is idempotent; group 1
// is the kind.
var placeholderPattern = regexp.MustCompile(`<secret:([a-z0-9_]+):[0-9a-f]{12}>`)

// builtinKinds are the kinds of Kinds(), as a set.
var builtinKinds = sync.OnceValue(func() map[string]bool {
	set := map[string]bool{}
	for _, k := range Kinds() {
		set[k] = true
	}
	return set
})

// writes tells whether a placeholder of kind can be one this scrubber wrote: a built-in kind
// (also one turned off since) or a kind of its rules. Text that only looks like a placeholder
// (<secret:4111111111111111:0123456789ab>, a card number as the kind) is scanned like any text.
func (s *Scrubber) writes(kind string) bool {
	_, rule := s.actions[kind]
	return rule || builtinKinds()[kind]
}

// placeholders returns the bounds of the placeholders in v that this scrubber can have written.
func (s *Scrubber) placeholders(v string) [][]int {
	all := placeholderPattern.FindAllStringSubmatchIndex(v, -1)
	kept := all[:0]
	for _, p := range all {
		if s.writes(v[p[2]:p[3]]) {
			kept = append(kept, p)
		}
	}
	return kept
}

// isPlaceholder tells whether v is one placeholder this scrubber can have written.
func (s *Scrubber) isPlaceholder(v string) bool {
	p := placeholderPattern.FindStringSubmatchIndex(v)
	return p != nil && p[0] == 0 && p[1] == len(v) && s.writes(v[p[2]:p[3]])
}

// maxDecodeDepth bounds base64 inside base64.
const maxDecodeDepth = 2

// spans runs every detector over v and returns the findings, sorted and with overlaps merged;
// an existing placeholder is left as it is.
func (s *Scrubber) spans(v string, depth int) []span {
	var found []span
	runs := base64Runs(v)
	// Long base64 runs that do not decode to text are binary data (images, audio, embeddings):
	// the text rules run on the text around them, not through them. A run written after its
	// name is a value: under a secret name it is masked whole, under a name the credential
	// rules read with their values it is text up to maxNamedValue (context.go).
	from := 0
	for _, run := range runs {
		if run.start < from {
			continue // a line of wrapped key material, masked below
		}
		if f, resume := s.valueAt(v, run.start); f.kind != "" {
			found = append(found, s.textSpans(v[from:run.start], from)...)
			found = append(found, f)
			from = resume
			continue
		}
		if run.end-run.start < opaqueRun || run.text || keyMaterial(v, run.start) {
			continue
		}
		name, f := nameBefore(v, run.start), span{start: run.start, end: run.end}
		if name != "" && s.assignment != nil { // as the name=value rule in text (keynames.go)
			f.kind = s.kindOf(name)
			if f.kind == "" && s.longKeyMaterial(name, v[run.start:run.end]) {
				f.kind = KindSecretField // signing_key: and 1 KiB of binary or more (context.go)
				if n, last := closingLineBreak(v, run.end); n > 0 {
					f.end, f.value = run.end+n, v[run.start:run.end]+last // "MIIE…\n" as JSON reads it
				}
			}
		}
		if f.kind == "" && contextName(name) && run.end-run.start <= maxNamedValue {
			continue // scanned with the text around it
		}
		found = append(found, s.textSpans(v[from:run.start], from)...)
		if f.kind != "" {
			found = append(found, f)
		}
		from = f.end
	}
	found = append(found, s.textSpans(v[from:], from)...)
	if depth < maxDecodeDepth {
		found = append(found, s.base64Spans(v, runs, depth)...)
	}
	if len(found) == 0 {
		return nil
	}
	for _, p := range s.placeholders(v) {
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
			last.end, last.value = f.end, ""
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

// valueAt returns the finding of a value masked whole that starts at v[start], where a base64
// run starts, and where the text after it is scanned from, or kind "": key material wrapped in
// lines (`signing_key: MIIE…\n…`, wrappedkey.go) or in a YAML block scalar (blockscalar.go),
// or the text of a triple-quoted string under a secret name (pystring.go; its closing quotes
// are not scanned, so that they are not taken for the opening of another), which the text
// rules, run on the text around a long run, would not see whole.
func (s *Scrubber) valueAt(v string, start int) (f span, resume int) {
	if end, value, ok := s.wrappedKeyAt(v, start); ok {
		return span{start: start, end: end, kind: KindSecretField, value: value}, end
	}
	if b, ok := s.keyMaterialBlock(v, start); ok {
		return b, b.end // signing_key: |, and the key below it (blockscalar.go)
	}
	if s.assignment == nil {
		return span{}, 0
	}
	if open, n := tripleQuoteBefore(v, start); n > 0 {
		if kind := s.tripleQuotedKind(v, open); kind != "" {
			end, closed := tripleQuotedEnd(v, open, n)
			f = span{start: start, end: end, kind: kind, value: tripleQuotedValue(v[start:end], n)}
			if closed {
				return f, end + n
			}
			return f, end
		}
	}
	return span{}, 0
}

// keyMaterial: the base64 run at start is the body of a private key written on one line
// (the header's last word and dashes are base64 characters, so they can open the run).
func keyMaterial(v string, start int) bool {
	return strings.Contains(v[max(0, start-100):min(len(v), start+40)], "PRIVATE KEY")
}

// textSpans runs the text rules over v, a part of a string starting at offset.
func (s *Scrubber) textSpans(v string, offset int) []span {
	if v == "" {
		return nil
	}
	found := s.assignmentSpans(v)
	if s.assignment != nil {
		// Session cookies: name=value with no secret name (cookies.go), and cookie objects
		// {"name": "sessionid", "value": …} (cookiejar.go).
		found = append(append(found, s.cookieSpans(v)...), s.cookieObjectSpans(v)...)
		found = append(found, s.tripleQuotedSpans(v)...) // password = '''…''' (pystring.go)
	}
	digits := countDigits(v)
	for i := range s.detectors {
		found = append(found, s.detectorSpans(&s.detectors[i], v, digits)...)
	}
	found = append(found, s.gitleaksSpans(v)...)
	for i := range found {
		found[i].start += offset
		found[i].end += offset
	}
	return found
}

func (s *Scrubber) detectorSpans(d *detector, v string, digits int) []span {
	if !d.mayMatch(v, digits) {
		return nil
	}
	var out []span
	for from, restarts := 0, 0; from >= 0; restarts++ {
		from = d.spansFrom(v, from, restarts < maxRestarts, &out)
	}
	if d.credential && len(out) > 0 {
		return everyOccurrence(v, out)
	}
	return out
}

// maxRestarts bounds how often detectorSpans searches again after a finding (spansFrom): a text
// made of findings that each touch the next would otherwise be searched once per finding.
const maxRestarts = 16

// spansFrom appends to out the findings of d's matches in v[from:], and returns where the search
// must start again, or -1. A finding becomes a placeholder, whose '>' is no letter or digit: the
// text after it is read as the start of a text, as the second pass reads it. The search went on
// after the whole match instead, with the character before it (the finding's last digit) or the
// one after it taken by the match (wordEnd's '_'), and missed what the second pass found:
// "07.004001114.2.020000 1001" matched up to "020000" and had its first number taken
// (validParts), and "020000 1001" was masked on the second pass only. With restart, the search
// starts again after a finding when the next match found from there is not the next match of
// this search; without it, this search goes on.
func (d *detector) spansFrom(v string, from int, restart bool, out *[]span) int {
	ms := d.re.FindAllStringSubmatchIndex(v[from:], -1)
	for k, m := range ms {
		start, end := m[0]+from, m[1]+from
		if d.group > 0 {
			g := d.group
			for 2*g+1 < len(m) && m[2*g] < 0 {
				g++ // this alternative's group
			}
			if len(m) <= 2*g+1 {
				continue
			}
			start, end = m[2*g]+from, m[2*g+1]+from
		}
		if start == end {
			continue
		}
		found := len(*out)
		if d.valid != nil && !d.valid(v[start:end]) {
			if d.part != nil {
				*out = append(*out, d.validParts(v, start, end, true)...)
			}
		} else if d.near == nil || d.near(v, start) {
			*out = append(*out, span{start: start, end: end, kind: d.kind, personal: d.personal})
		}
		if !restart || len(*out) == found {
			continue
		}
		after := (*out)[len(*out)-1].end
		next := d.re.FindStringIndex(v[after:])
		if next == nil {
			return -1 // nor any match of this search
		}
		if k+1 == len(ms) || next[0]+after != ms[k+1][0]+from || next[1]+after != ms[k+1][1]+from {
			return after
		}
	}
	return -1
}

// everyOccurrence returns found with every other occurrence in v of a credential it holds, as
// gitleaks' findings are masked (gitleaksFind): one touched by a letter or a digit
// (ref0sk-proj-…) is not found by the rule, whose boundary keeps words and ids from being taken
// for keys, but is the same secret once the rule found it elsewhere in the text. Found and
// repeated spans are merged (spans).
func everyOccurrence(v string, found []span) []span {
	out := found
	var seen map[string]bool
	for _, f := range found {
		secret := v[f.start:f.end]
		if seen[secret] {
			continue
		}
		if seen == nil {
			seen = map[string]bool{}
		}
		seen[secret] = true
		out = appendOccurrences(out, v, secret, f.kind)
	}
	return out
}

// appendOccurrences appends to out a span of kind for each occurrence of secret in v.
func appendOccurrences(out []span, v, secret, kind string) []span {
	for from := 0; ; {
		i := strings.Index(v[from:], secret)
		if i < 0 {
			return out
		}
		out = append(out, span{start: from + i, end: from + i + len(secret), kind: kind})
		from += i + len(secret)
	}
}

// gitleaksSpans reports every occurrence of each secret gitleaks finds (it reports the secret,
// not its offset), in v and in its prose view (prose.go), which has v's offsets.
func (s *Scrubber) gitleaksSpans(v string) []span {
	if s.gitleaks == nil || len(v) < 8 {
		return nil
	}
	var seen map[gitleaksFound]bool
	out := s.gitleaksFind(v, true, &seen) // with the token rules widened (boundaries.go)
	if view, ok := proseView(v); ok {
		out = append(out, s.gitleaksFind(view, false, &seen)...)
	}
	return out
}

type gitleaksFound struct{ secret, kind string }

// gitleaksFind returns the spans of the secrets gitleaks finds in v that are not in seen yet;
// with widened, also those of the widened token rules.
func (s *Scrubber) gitleaksFind(v string, widened bool, seen *map[gitleaksFound]bool) []span {
	var out []span
	for _, f := range s.gitleaks.find(v, widened) {
		secret := strings.Trim(f.Secret, "\n")
		if len(secret) < 4 {
			continue
		}
		// gitleaks reports a secret once per occurrence, and each report is looked for
		// everywhere: a text that repeats a secret n times would give n² spans (a minute for
		// 400 KB of tool results that repeat a key).
		key := gitleaksFound{secret, gitleaksKind(f.RuleID)}
		if (*seen)[key] {
			continue
		}
		if *seen == nil {
			*seen = map[gitleaksFound]bool{}
		}
		(*seen)[key] = true
		out = appendOccurrences(out, v, secret, key.kind)
	}
	return out
}

// opaqueRun is the length from which a base64 run that does not decode to text is treated as
// binary data.
const opaqueRun = 1024

// minBase64Run is the shortest run worth decoding: long enough to hide a credential.
const minBase64Run = 24

// b64Run is a run of base64 characters in a string; text is whether it decodes to text.
type b64Run struct {
	start, end int
	decoded    string
	text       bool
}

func isBase64Byte(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '-' || c == '_'
}

// base64Runs finds the runs of at least minBase64Run base64 characters (with their padding)
// and decodes them.
func base64Runs(v string) []b64Run {
	var runs []b64Run
	for i := 0; i < len(v); {
		if !isBase64Byte(v[i]) {
			i++
			continue
		}
		start := i
		for i < len(v) && isBase64Byte(v[i]) {
			i++
		}
		for pad := 0; pad < 2 && i < len(v) && v[i] == '='; pad++ {
			i++
		}
		if i-start < minBase64Run {
			continue
		}
		run := b64Run{start: start, end: i}
		run.decoded, run.text = decodeBase64Text(v[start:i])
		if !run.text && i-start < opaqueRun { // a long run that does not decode is binary data
			run = textAfterPath(v, run)
		}
		runs = append(runs, run)
	}
	return runs
}

// pathPrefixBytes bounds where, in a run that does not decode, textAfterPath looks for the
// separator that ends a URL's path before a base64 value: a path is short, and a binary run
// (an image) holds '/' every 64 characters or so.
const pathPrefixBytes = 64

// textAfterPath is run, or the part of it after a '/', '-' or '_' within its first
// pathPrefixBytes when that part decodes to text: '/' is a base64 character, so base64 in a
// URL's path (/r/eyJlbWFpbCI6…) is one run with the path before it and decodes as neither.
func textAfterPath(v string, run b64Run) b64Run {
	for i := run.start; i < min(run.end, run.start+pathPrefixBytes); i++ {
		if c := v[i]; c != '/' && c != '-' && c != '_' || run.end-(i+1) < minBase64Run {
			continue
		}
		if decoded, ok := decodeBase64Text(v[i+1 : run.end]); ok {
			return b64Run{start: i + 1, end: run.end, decoded: decoded, text: true}
		}
	}
	return run
}

// base64Spans scans the runs that decode to text: when the text holds a finding, the whole
// encoded run is masked (with the kind of the first finding inside).
func (s *Scrubber) base64Spans(v string, runs []b64Run, depth int) []span {
	var out []span
	for _, run := range runs {
		if !run.text {
			continue
		}
		// Decoded text is text like any other: JSON escapes, look-alikes (foldedSpans).
		if inner := s.foldedSpans(run.decoded, depth+1); len(inner) > 0 {
			out = append(out, span{start: run.start, end: run.end, kind: inner[0].kind})
		}
	}
	return out
}

// decodeBase64Text decodes standard or URL-safe base64, padded or not, and accepts the result
// only if it is printable UTF-8 text.
func decodeBase64Text(t string) (string, bool) {
	t = strings.TrimRight(t, "=")
	enc := base64.RawStdEncoding
	if strings.ContainsAny(t, "-_") {
		enc = base64.RawURLEncoding
	}
	// Random bytes fail the text test within the first few characters: check a prefix before
	// decoding a large run.
	if len(t) > 256 {
		head, err := enc.DecodeString(t[:256])
		if err != nil || !printable(head, true) {
			return "", false
		}
	}
	b, err := enc.DecodeString(t)
	if err != nil || !printable(b, false) {
		return "", false
	}
	return string(b), true
}

// printable: UTF-8 without control characters other than whitespace. A cut prefix may end
// inside a character.
func printable(b []byte, prefix bool) bool {
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size <= 1 {
			return prefix && len(b) < utf8.UTFMax && !utf8.FullRune(b)
		}
		if r < 0x20 && r != '\n' && r != '\r' && r != '\t' {
			return false
		}
		b = b[size:]
	}
	return true
}

// replace writes v with each span replaced by its placeholder, and counts them.
func (s *Scrubber) replace(v string, found []span, r *Report) string {
	var b strings.Builder
	last := 0
	for _, f := range found {
		b.WriteString(v[last:f.start])
		b.WriteString(s.placeholder(f.kind, f.hashed(v)))
		r.found(f.kind, s.actions[f.kind])
		last = f.end
	}
	b.WriteString(v[last:])
	return b.String()
}
