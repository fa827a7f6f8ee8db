package scrub

import "strings"

// A YAML block scalar writes its value on the lines below its name:
//
//	password: |
//	  correct horse battery staple
//
// so the `name: value` rule saw `|` as the value (and `>` as none) and kept the lines below.
// Under a secret name whose pair opens its line, an indicator (`|` or `>`, with an optional
// chomping `-`/`+` and indentation digit, then nothing but spaces or a `# comment` on its line)
// makes the value every following line indented deeper than the name, blank lines among them
// included, up to the first non-blank line that is not: what YAML reads as the block. The span
// runs from the first line's text to the end of the last one, the indentation between them
// included, and the placeholder is that of the value as YAML reads it (block.value), the one the
// same secret gets as a JSON string or an attribute. An indicator with no deeper line
// below it has no value and is kept. The pairs inside a masked block are not matched again, so
// each line is read once however the blocks nest.

// blockIndicator tells whether t is a block scalar's indicator: `|` or `>`, then at most one
// chomping indicator and one indentation digit, in either order.
func blockIndicator(t string) bool {
	if t == "" || t[0] != '|' && t[0] != '>' {
		return false
	}
	chomp, digit := false, false
	for i := 1; i < len(t); i++ {
		switch c := t[i]; {
		case (c == '-' || c == '+') && !chomp:
			chomp = true
		case c >= '1' && c <= '9' && !digit:
			digit = true
		default:
			return false
		}
	}
	return true
}

// blockValue returns the span of the block scalar whose indicator is at v[start] under the name
// at v[keyStart], when there is one: the indicator ends its line and the name opens its line.
func blockValue(v string, keyStart, start, end int, kind string) (span, bool) {
	if v[start] == '>' { // the value pattern stops `>` at one byte: take what follows it
		for end < len(v) && end-start < 3 && (v[end] == '-' || v[end] == '+' || v[end] >= '1' && v[end] <= '9') {
			end++
		}
	}
	column, ok := blockColumn(v, keyStart)
	if !ok || !blockIndicator(v[start:end]) {
		return span{}, false
	}
	i := end
	for i < len(v) && (v[i] == ' ' || v[i] == '\t') {
		i++
	}
	if i < len(v) && v[i] == '#' && i > end { // a comment needs a space before it
		for i < len(v) && v[i] != '\n' && v[i] != '\r' {
			i++
		}
	}
	if i < len(v) && v[i] != '\n' && v[i] != '\r' {
		return span{}, false // text after the indicator: `password: > 8 characters`
	}
	var b block
	first, last, blank := -1, -1, 0
	for i < len(v) {
		i = nextLine(v, i)
		indent := i
		for indent < len(v) && (v[indent] == ' ' || v[indent] == '\t') {
			indent++
		}
		lineEnd := indent
		for lineEnd < len(v) && v[lineEnd] != '\n' && v[lineEnd] != '\r' {
			lineEnd++
		}
		// Blank: part of the block if a deeper line follows. Spaces past the block's indentation
		// are a line of them (YAML reads "    " in a block indented by 2 as "  ").
		if lineEnd == indent && (first < 0 || indent-i <= b.indent) {
			if lineEnd < len(v) {
				blank++ // a line, not the end of the text after a line break
			}
			i = lineEnd
			continue
		}
		if indent-i <= column {
			break
		}
		if first < 0 {
			first, b.leading, blank = indent, blank, 0
			b.indent = indent - i
			if d := strings.IndexAny(v[start:end], "123456789"); d >= 0 {
				b.indent = column + int(v[start+d]-'0') // the indentation indicator, from the name's
			}
		}
		for ; blank > 0; blank-- {
			b.lines = append(b.lines, "")
		}
		b.lines = append(b.lines, v[i+min(b.indent, indent-i):lineEnd])
		last, i = lineEnd, lineEnd
	}
	if first < 0 {
		return span{}, false
	}
	b.trailing, b.finalBreak = blank, last < len(v)
	value := b.value(v[start], strings.IndexByte(v[start:end], '-') >= 0, strings.IndexByte(v[start:end], '+') >= 0)
	return span{start: first, end: last, kind: kind, value: value}, true
}

// blockColumn returns the column of the name at v[keyStart] in its YAML document, when its pair
// opens its line (opensField) or a JSON string in text: the text of `"content": "password: |`
// is a document of its own, and once its escapes are decoded its lines are below the name.
func blockColumn(v string, keyStart int) (int, bool) {
	if opensField(v, keyStart) {
		return keyStart - (strings.LastIndexAny(v[:keyStart], "\n\r") + 1), true
	}
	i := keyStart
	for i > 0 && (v[i-1] == ' ' || v[i-1] == '-') {
		i-- // "- password: |", a list's first item
	}
	if i == 0 || v[i-1] != '"' {
		return 0, false
	}
	j := i - 1
	for j > 0 && v[j-1] == ' ' {
		j--
	}
	if j == 0 || strings.IndexByte(":[,", v[j-1]) < 0 {
		return 0, false // not a string's opening quote
	}
	return keyStart - i, true
}

// block is a block scalar's lines below its indicator, without their indentation: those from
// the first with text to the last with text (blank ones empty), and how many blank lines come
// before and after them.
type block struct {
	indent            int // the block's indentation: the indicator's digit, or the first line's
	lines             []string
	leading, trailing int
	finalBreak        bool // the last line with text ends with a line break
}

// value is the block's value as YAML reads it (YAML 1.2, 8.1), so that a secret written as a
// block scalar has the placeholder it has as a JSON string or an attribute: a literal block
// (`|`) joins its lines with line breaks; a folded one (`>`) joins two lines with a space, or
// with one line break per blank line between them, except around a line indented deeper than
// the block, whose breaks are kept; blank lines before the first line are line breaks. The
// chomping indicator then decides the final line breaks: `-` none, `+` all of them (the last
// line's and one per blank line after it), none given the last line's.
func (b block) value(style byte, strip, keep bool) string {
	var out strings.Builder
	out.WriteString(strings.Repeat("\n", b.leading))
	out.WriteString(b.lines[0])
	prev, blank := b.lines[0], 0 // the last line with text, the blank lines after it
	for _, l := range b.lines[1:] {
		if l == "" {
			blank++
			continue
		}
		switch {
		case style == '|' || deeper(prev) || deeper(l):
			out.WriteString(strings.Repeat("\n", blank+1))
		case blank == 0:
			out.WriteByte(' ')
		default:
			out.WriteString(strings.Repeat("\n", blank))
		}
		out.WriteString(l)
		prev, blank = l, 0
	}
	if b.finalBreak && !strip {
		out.WriteByte('\n')
		if keep {
			out.WriteString(strings.Repeat("\n", b.trailing))
		}
	}
	return out.String()
}

// deeper tells whether a line of a folded block, its indentation removed, is indented deeper
// than the block: its line breaks are not folded.
func deeper(line string) bool {
	return line != "" && (line[0] == ' ' || line[0] == '\t')
}

// nextLine returns the start of the line after the line break at v[i] ("\n", "\r\n" or "\r").
func nextLine(v string, i int) int {
	if i < len(v) && v[i] == '\r' {
		i++
		if i < len(v) && v[i] == '\n' {
			i++
		}
		return i
	}
	return i + 1
}

// keyMaterialBlock returns the block scalar whose first line's text starts at v[start] under a
// name of key material, when its value is key material (longKeyMaterial): `signing_key: |⏎
// MIIE…⏎  …`, a wrapped key in a literal block, as YAML writes a key most often. Such a name is
// no secret name, so the assignment pattern does not find the pair; the base64 run the block's
// first line starts with does, and this looks at the line above it: one line, at a line's
// indentation only.
func (s *Scrubber) keyMaterialBlock(v string, start int) (span, bool) {
	if s.assignment == nil {
		return span{}, false
	}
	lineStart := start
	for lineStart > 0 && (v[lineStart-1] == ' ' || v[lineStart-1] == '\t') {
		lineStart--
	}
	if lineStart == start || lineStart == 0 || v[lineStart-1] != '\n' && v[lineStart-1] != '\r' {
		return span{}, false
	}
	headerEnd := lineStart - 1
	if headerEnd > 0 && v[headerEnd] == '\n' && v[headerEnd-1] == '\r' {
		headerEnd--
	}
	// The indicator is after the line's last `: ` that has one after it (a comment may follow).
	headerStart := strings.LastIndexAny(v[:headerEnd], "\n\r") + 1
	colon, ind, indEnd := headerEnd, 0, 0
	for {
		if colon = strings.LastIndex(v[headerStart:colon], ": "); colon < 0 {
			return span{}, false
		}
		colon += headerStart
		ind = indentEnd(v, colon+1)
		for indEnd = ind; indEnd < headerEnd && v[indEnd] != ' ' && v[indEnd] != '\t'; indEnd++ {
		}
		if blockIndicator(v[ind:indEnd]) {
			break
		}
	}
	name := nameBefore(v, ind)
	if !nameEndsIn(name, keyMaterialEndings) {
		return span{}, false
	}
	keyStart := colon - len(name)
	if v[colon-1] == '"' || v[colon-1] == '\'' {
		keyStart -= 2 // "signing_key": |
	}
	b, ok := blockValue(v, keyStart, ind, indEnd, KindSecretField)
	if !ok || b.start != start || !s.longKeyMaterial(name, b.value) {
		return span{}, false
	}
	return b, true
}
