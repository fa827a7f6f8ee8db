package scrub

import "fmt"

// keywordIndex answers, fast and in little memory: does some keyword occur in a text, ASCII
// letters compared without regard to case (in), and which (each)? It is an Aho-Corasick
// automaton compiled to a table (every failure link resolved at build time, so a byte costs one
// lookup): a row per prefix of a keyword, a column per byte that occurs in some keyword. Bytes that occur in none
// share column 0, and an upper-case ASCII letter shares the column of its lower-case letter, so
// that the text needs no lower-cased copy. The default gitleaks keywords make 1,281 rows of 43
// uint16 (112 KB), where a general-purpose trie that keeps 256 int64 per row needs 2 KiB a row
// (2.6 MB); `go test -count 1 -run TestKeywordIndexIsSmall -v ./scrub/` logs both. The compact
// library the module proxy serves (github.com/coregx/ahocorasick v0.3.1) was not taken: its
// search looks up each of the keywords' first bytes in the rest of the text every time it is
// back at the start, so its time grows with the square of the text's length, and the text is
// the user's.
type keywordIndex struct {
	column [256]uint16 // byte → column
	width  int         // columns per row
	next   []uint16    // next[row*width+column]: the row after one more byte; row 0 is the empty prefix
	found  []bool      // found[row]: the text read so far ends with a keyword
	// For each, which keywords: ends[row] is the number of the keyword that row spells (its
	// index in the keywords given), -1 if none; shorter[row] the longest proper suffix of row's
	// prefix that spells a keyword (0: none).
	ends    []int32
	shorter []uint16
}

// maxKeywordRows bounds the prefixes, so that a row number fits in the table's uint16.
const maxKeywordRows = 1 << 16

// newKeywordIndex builds the index of keywords (compared with ASCII letters lower-cased).
func newKeywordIndex(keywords []string) (*keywordIndex, error) {
	k := &keywordIndex{width: 1}
	for _, w := range keywords {
		for i := 0; i < len(w); i++ {
			if c := lowerByte(w[i]); k.column[c] == 0 {
				k.column[c] = uint16(k.width)
				k.width++
			}
		}
	}
	for c := 'A'; c <= 'Z'; c++ {
		k.column[c] = k.column[c+'a'-'A']
	}

	// The trie: a keyword's bytes lead from row 0 to the row marked found. 0 in a cell means
	// "no child" (no byte leads back to the empty prefix).
	k.next = make([]uint16, k.width)
	k.found = []bool{false}
	k.ends = []int32{-1}
	for n, w := range keywords {
		row := 0
		for i := 0; i < len(w); i++ {
			cell := row*k.width + int(k.column[w[i]])
			if k.next[cell] == 0 {
				if len(k.found) == maxKeywordRows {
					return nil, fmt.Errorf("keyword index: the keywords have more than %d distinct prefixes", maxKeywordRows)
				}
				k.next[cell] = uint16(len(k.found))
				k.next = append(k.next, make([]uint16, k.width)...)
				k.found = append(k.found, false)
				k.ends = append(k.ends, -1)
			}
			row = int(k.next[cell])
		}
		k.found[row] = true
		if k.ends[row] < 0 { // a keyword given twice keeps its first number
			k.ends[row] = int32(n)
		}
	}

	// Breadth first, each row's missing cells become those of its failure row (the longest
	// proper suffix of its prefix that is also a prefix), which is shorter and so already
	// complete; and a row is found when its failure row is.
	fail := make([]uint16, len(k.found))
	k.shorter = make([]uint16, len(k.found))
	var queue []int
	for c := 0; c < k.width; c++ {
		if child := k.next[c]; child != 0 {
			queue = append(queue, int(child)) // failure row 0
		}
	}
	for len(queue) > 0 {
		row := queue[0]
		queue = queue[1:]
		f := int(fail[row])
		k.found[row] = k.found[row] || k.found[f]
		if k.ends[f] >= 0 {
			k.shorter[row] = uint16(f)
		} else {
			k.shorter[row] = k.shorter[f]
		}
		for c := 0; c < k.width; c++ {
			cell := row*k.width + c
			if child := k.next[cell]; child != 0 {
				fail[child] = k.next[f*k.width+c]
				queue = append(queue, int(child))
			} else {
				k.next[cell] = k.next[f*k.width+c]
			}
		}
	}
	return k, nil
}

// in reports whether some keyword occurs in text.
func (k *keywordIndex) in(text string) bool {
	if k.found[0] {
		return true // an empty keyword
	}
	row := 0
	for i := 0; i < len(text); i++ {
		row = int(k.next[row*k.width+int(k.column[text[i]])])
		if k.found[row] {
			return true
		}
	}
	return false
}

// each calls f with the number of each keyword that occurs in text, once per occurrence.
func (k *keywordIndex) each(text string, f func(keyword int)) {
	if k.ends[0] >= 0 {
		f(int(k.ends[0])) // the empty keyword
	}
	row := 0
	for i := 0; i < len(text); i++ {
		row = int(k.next[row*k.width+int(k.column[text[i]])])
		if !k.found[row] {
			continue
		}
		for r := row; r != 0; r = int(k.shorter[r]) {
			if n := k.ends[r]; n >= 0 {
				f(int(n))
			}
		}
	}
}

// size is the bytes the index holds.
func (k *keywordIndex) size() int {
	return len(k.column)*2 + len(k.next)*2 + len(k.found) + len(k.ends)*4 + len(k.shorter)*2
}

func lowerByte(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
