package scrub

import "strings"

// Key material is often written wrapped, without its PEM lines: base64 in lines of 64 (PEM) or
// 76 (MIME) characters, joined by newlines, or by `\n` escapes inside a JSON string in text.
// No line is opaqueRun long, so no run of it is taken for binary data, and the rules find a
// line or not by its bytes; under a name of key material the lines are masked together.

// keyLineWidths are the widths key material is wrapped at: PEM's 64, MIME's 76.
var keyLineWidths = [...]int{64, 76}

// keyLineBreaks are the line breaks between wrapped lines, in text and escaped in a JSON string.
var keyLineBreaks = [...]string{"\r\n", "\n", `\r\n`, `\n`}

// wrappedKeyEnd returns the end of base64 wrapped in lines that starts at v[start]: lines of
// one width of keyLineWidths joined by one of keyLineBreaks, the last as long or shorter (with
// its padding). It is taken when it has two lines or more, opaqueRun base64 characters or more
// and decodes to no text (a DER key); a short last line must end the value (end of v,
// whitespace, a quote, a separator) or it is not the key's. One pass over the lines.
func wrappedKeyEnd(v string, start int) (int, bool) {
	var b strings.Builder // the base64 alone, to decode
	width, lineBreak, lines, end := 0, "", 0, start
	for i := start; ; lines++ {
		j := i
		for j < len(v) && isBase64Byte(v[j]) {
			j++
		}
		n := j - i
		for pad := 0; pad < 2 && j < len(v) && v[j] == '='; pad++ {
			j++
		}
		if width == 0 {
			if n != keyLineWidths[0] && n != keyLineWidths[1] {
				return 0, false
			}
			width = n
			for _, lb := range keyLineBreaks {
				if strings.HasPrefix(v[j:], lb) {
					lineBreak = lb
					break
				}
			}
			if lineBreak == "" {
				return 0, false
			}
		}
		if n > width || n < width && !endsValue(v, j) || n == 0 {
			break // not a line of the key: it ended at the line break before
		}
		b.WriteString(v[i:j])
		end = j
		if n < width || j > i+n || !strings.HasPrefix(v[j:], lineBreak) {
			lines++
			break // a short or padded line is the last
		}
		i = j + len(lineBreak)
	}
	if lines < 2 || b.Len() < opaqueRun {
		return 0, false
	}
	_, text := decodeBase64Text(b.String())
	return end, !text
}

// endsValue tells whether v[i] ends a value: the end of v, a line break, a quote, a separator or
// an escape's backslash.
func endsValue(v string, i int) bool {
	return i == len(v) || strings.IndexByte("\r\n\"'`,;)}]\\", v[i]) >= 0
}

// wrappedKeyAt returns the end of key material wrapped in lines at v[start] written after a
// name of key material (`signing_key: MIIE…\n…`, `"ssh_key": "MIIE…\n…"`), or false.
func (s *Scrubber) wrappedKeyAt(v string, start int) (int, bool) {
	if s.assignment == nil || start+keyLineWidths[0] > len(v) || !nameEndsIn(nameBefore(v, start), keyMaterialEndings) {
		return 0, false
	}
	return wrappedKeyEnd(v, start)
}
