package pricing

import (
	"strconv"
	"strings"
)

// FormatUSD writes an amount of US dollars for a person: six decimals (a millionth of a dollar),
// and for a non-zero amount that six decimals would show as 0.000000 (a short embedding call, a
// delta of a few tokens), its first two significant digits instead: 0.00000025, not 0.000000.
func FormatUSD(v float64) string {
	s := strconv.FormatFloat(v, 'f', 6, 64)
	if v == 0 || strings.Trim(s, "-0.") != "" {
		return s
	}
	rounded, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'e', 1, 64), 64)
	return strconv.FormatFloat(rounded, 'f', -1, 64)
}
