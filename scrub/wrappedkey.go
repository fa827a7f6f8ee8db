package scrub

import "strings"

// Key material is often written wrapped, without its PEM lines: base64 in lines of 64 (PEM) or
// 76 (MIME) characters, joined by newlines, or by `\n` escapes inside a JSON string in text.
// No line is opaqueRun long, so no run of it is taken for binary data, and the rules find a
// line or not by its bytes; under a name of key material the lines are masked together.
//
// In YAML the lines below the first are indented (a plain or quoted scalar over lines,
// `signing_key: MIIE…⏎  AbCd…`), and YAML reads each line break and the indentation after it
// as one space: the value masked is the one YAML reads, so that the YAML text, the JSON a YAML
// parser makes of it ({"signing_key": "MIIE… AbCd…"}, lines joined by spaces) and the same
// key with escaped line breaks in a log line have one placeholder.

// keyLineWidths are the widths key material is wrapped at: PEM's 64, MIME's 76.
var keyLineWidths = [...]int{64, 76}

// keyLineBreak is a line break between wrapped lines as written, and what it stands for in the
// value: a JSON escape the line break it escapes, YAML's escaped line break or a closing quote
// and its line break nothing.
type keyLineBreak struct{ written, read string }

// keyLineBreaks are the line breaks between wrapped lines: in text, escaped in a JSON string
// (and in JSON in a JSON string), YAML's escaped line break in a double-quoted scalar (`\` at
// the end of the line: nothing), the space YAML reads a folded line break as, and a line break
// after a closing quote, in parentheses in Python (`signing_key = (⏎    "MIIE…"⏎    "AbCd…"⏎)`:
// nothing; the next line opens the same quote, wrappedKeyEnd).
var keyLineBreaks = [...]keyLineBreak{{"\r\n", "\r\n"}, {"\n", "\n"}, {`\r\n`, "\r\n"}, {`\n`, "\n"},
	{`\\r\\n`, "\r\n"}, {`\\n`, "\n"}, {"\\\r\n", ""}, {"\\\n", ""}, {" ", " "},
	{"\"\r\n", ""}, {"\"\n", ""}, {"'\r\n", ""}, {"'\n", ""}}

// wrappedKeyEnd returns the end of base64 wrapped in lines that starts at v[start], and the
// value it stands for: lines of one width of keyLineWidths joined by one of keyLineBreaks, the
// last as long or shorter (with its padding). The lines below the first are all indented or
// none is; indented, each line break and the indentation after it are read as YAML reads them
// (one space; nothing after an escaped line break). Lines in quotes, each closed at the end of
// its line and the next opened after the indentation, are one string (Python's implicit
// concatenation: nothing between them). A line break between the last line and a closing quote
// is the value's too (closingLineBreak).
// It is taken when it has two lines or more, opaqueRun base64 characters or more and decodes to
// no text (a DER key); a short last line must end the value (end of v, whitespace, a quote, a
// separator) or it is not the key's. One pass over the lines.
func wrappedKeyEnd(v string, start int) (end int, value string, ok bool) {
	var b, read strings.Builder // the base64 alone, to decode; the value
	var lb keyLineBreak
	width, lines, indented, sep := 0, 0, false, ""
	end = start
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
				return 0, "", false
			}
			width = n
			if lb = keyLineBreakAt(v, j); lb.written == "" {
				return 0, "", false
			}
			indented = lb.written != " " && indentEnd(v, j+len(lb.written)) > j+len(lb.written)
		}
		if n > width || n < width && !endsValue(v, j) || n == 0 {
			break // not a line of the key: it ended at the line break before
		}
		b.WriteString(v[i:j])
		read.WriteString(sep)
		read.WriteString(v[i:j])
		end = j
		if n < width || j > i+n || !strings.HasPrefix(v[j:], lb.written) {
			lines++
			break // a short or padded line is the last
		}
		i = j + len(lb.written)
		k := indentEnd(v, i)
		if (k > i) != indented {
			lines++
			break // an indented line among lines that are not, or the reverse: not the key's
		}
		if q := lb.written[0]; q == '"' || q == '\'' {
			if k == len(v) || v[k] != q {
				lines++
				break // no string opens the next line: the last line's quote closed the value
			}
			k++
		}
		i = k
		if sep = lb.read; indented && sep != "" {
			sep = " "
		}
	}
	if lines < 2 || b.Len() < opaqueRun {
		return 0, "", false
	}
	if _, text := decodeBase64Text(b.String()); text {
		return 0, "", false
	}
	if n, last := closingLineBreak(v, end); n > 0 && !indented {
		end += n
		read.WriteString(last)
	}
	return end, read.String(), true
}

// closingLineBreak returns the length of the line break at v[i] (a newline, escaped or not)
// that a closing quote follows, and the line break it stands for, or 0: the last byte of a
// value in quotes, as a key file read whole ends ({"signing_key": "MIIE…\n"}).
func closingLineBreak(v string, i int) (int, string) {
	for _, lb := range keyLineBreaks {
		if strings.HasSuffix(lb.read, "\n") && strings.HasPrefix(v[i:], lb.written) && quoteAt(v, i+len(lb.written)) {
			return len(lb.written), lb.read
		}
	}
	return 0, ""
}

// keyLineBreakAt returns the line break of keyLineBreaks at v[i], or none.
func keyLineBreakAt(v string, i int) keyLineBreak {
	for _, lb := range keyLineBreaks {
		if strings.HasPrefix(v[i:], lb.written) {
			return lb
		}
	}
	return keyLineBreak{}
}

// indentEnd returns the end of the spaces and tabs at v[i].
func indentEnd(v string, i int) int {
	for i < len(v) && (v[i] == ' ' || v[i] == '\t') {
		i++
	}
	return i
}

// quoteAt tells whether a quote, or an escaped one, is at v[i].
func quoteAt(v string, i int) bool {
	return i < len(v) && (v[i] == '"' || v[i] == '\'') || strings.HasPrefix(v[i:], `\"`)
}

// endsValue tells whether v[i] ends a value: the end of v, whitespace, a quote, a separator or
// an escape's backslash.
func endsValue(v string, i int) bool {
	return i == len(v) || strings.IndexByte(" \t\r\n\"'`,;)}]\\", v[i]) >= 0
}

// wrappedKeyAt returns the end of key material wrapped in lines at v[start] written after a
// name of key material (`signing_key: MIIE…\n…`, `"ssh_key": "MIIE…\n…"`), and the value it
// stands for (wrappedKeyEnd), or false.
func (s *Scrubber) wrappedKeyAt(v string, start int) (int, string, bool) {
	if s.assignment == nil || start+keyLineWidths[0] > len(v) || !nameEndsIn(nameBefore(v, start), keyMaterialEndings) {
		return 0, "", false
	}
	return wrappedKeyEnd(v, start)
}
