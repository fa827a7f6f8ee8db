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
// is the value's too (closingLineBreak). A line may end in spaces or tabs before a newline,
// and blank lines may follow it (keyLineGap): as written in the value, as YAML reads them in
// indented lines (the spaces dropped); a blank line among indented lines ends the key.
// It is taken when it has two lines or more, opaqueRun base64 characters or more and decodes to
// no text (a DER key); a short last line must end the value (end of v, whitespace, a quote, a
// separator) or it is not the key's. One pass over the lines.
func wrappedKeyEnd(v string, start int) (end int, value string, ok bool) {
	var b, read strings.Builder // the base64 alone, to decode; the value
	var lb keyLineBreak
	width, lines, indented, sep := 0, 0, false, ""
	blanks := 0 // blank lines before the line read
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
			if lb = keyLineBreakAt(v, indentEnd(v, j)); !newlineBreak(lb) {
				lb = keyLineBreakAt(v, j) // spaces at the end of a line only before a newline
			}
			if lb.written == "" {
				return 0, "", false
			}
			next, _ := keyLineGap(v, j, lb)
			indented = lb.written != " " && indentEnd(v, next) > next
		}
		if n > width || n < width && (!endsValue(v, j) || blanks > 0 && !lineEndAt(v, j, lb)) || n == 0 {
			break // not a line of the key: it ended at the line break before
		}
		b.WriteString(v[i:j])
		read.WriteString(sep)
		read.WriteString(v[i:j])
		end = j
		next, blankLines := keyLineGap(v, j, lb)
		if n < width || j > i+n || next < 0 {
			lines++
			break // a short or padded line is the last
		}
		i, blanks = next, blankLines
		k := indentEnd(v, i)
		if (k > i) != indented || indented && blanks > 0 {
			// An indented line among lines that are not, or the reverse: not the key's. A
			// blank line in YAML is read as a line break among the spaces YAML folds the
			// others to, a value a YAML parser writes that is no lines of one break: the
			// key ends before it, as that value's would.
			lines++
			break
		}
		if q := lb.written[0]; q == '"' || q == '\'' {
			if k == len(v) || v[k] != q {
				lines++
				break // no string opens the next line: the last line's quote closed the value
			}
			k++
		}
		switch {
		case !indented:
			sep = strings.ReplaceAll(v[j:i], lb.written, lb.read) // as written, escapes decoded
		case lb.read != "":
			sep = " " // YAML reads a line break, with the spaces around it, as one space
		default:
			sep = ""
		}
		i = k
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

// keyLineGap returns where the line after the one that ends at v[j] starts, past the line
// break lb, and how many blank lines it passed, or -1. Before a newline (escaped or not) a
// line may end in spaces or tabs, and blank lines (spaces or tabs alone) may follow it: a key
// pasted from an editor or a terminal.
func keyLineGap(v string, j int, lb keyLineBreak) (next, blanks int) {
	if newlineBreak(lb) {
		j = indentEnd(v, j)
	}
	if !strings.HasPrefix(v[j:], lb.written) {
		return -1, 0
	}
	next = j + len(lb.written)
	for newlineBreak(lb) {
		k := indentEnd(v, next)
		if !strings.HasPrefix(v[k:], lb.written) {
			break
		}
		next, blanks = k+len(lb.written), blanks+1
	}
	return next, blanks
}

// newlineBreak tells whether lb is a newline, written or escaped.
func newlineBreak(lb keyLineBreak) bool {
	return strings.HasSuffix(lb.read, "\n")
}

// lineEndAt tells whether the line ends at v[j], after spaces or tabs: at a line break (lb, or
// a newline), a quote or the end of v. A short line after a blank line ends there, or it is text (prose
// after the key), not the key's last line.
func lineEndAt(v string, j int, lb keyLineBreak) bool {
	j = indentEnd(v, j)
	return j == len(v) || v[j] == '\n' || v[j] == '\r' || strings.HasPrefix(v[j:], lb.written) || quoteAt(v, j)
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
