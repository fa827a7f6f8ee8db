package pricing

import "testing"

func TestFormatUSD(t *testing.T) {
	for v, want := range map[float64]string{
		0: "0.000000", 0.0075: "0.007500", 1.5225: "1.522500", 0.0000005: "0.0000005", 0.0000015: "0.000002",
		0.00000025: "0.00000025", 20 * 0.02 / 1e6: "0.0000004", -0.0000003: "-0.0000003",
	} {
		if got := FormatUSD(v); got != want {
			t.Errorf("FormatUSD(%g) = %q, want %q", v, got, want)
		}
	}
}
