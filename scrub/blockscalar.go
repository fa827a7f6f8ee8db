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
// included (the placeholder is that of the lines as written). An indicator with no deeper line
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
	if !blockIndicator(v[start:end]) || !opensField(v, keyStart) {
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
	column := keyStart - (strings.LastIndexAny(v[:keyStart], "\n\r") + 1)
	first, last := -1, -1
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
		if lineEnd == indent { // blank: part of the block if a deeper line follows
			i = lineEnd
			continue
		}
		if indent-i <= column {
			break
		}
		if first < 0 {
			first = indent
		}
		last, i = lineEnd, lineEnd
	}
	if first < 0 {
		return span{}, false
	}
	return span{start: first, end: last, kind: kind}, true
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
