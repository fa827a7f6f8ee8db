package dataset

import (
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/assert"
)

// rowsOf cuts rows [lo, hi) out of a column's pages whatever the page boundaries: a row is the
// values from one with repetition level 0 to the next.
func TestRowsOfCutsRowRangesAcrossPages(t *testing.T) {
	// Three pages of a repeated column; value i holds i, rows are 0:{0,1,2} 1:{3} 2:{4,5}
	// 3:{6} 4:{7,8}.
	levels := [][]int{{0, 1, 1, 0}, {0, 1, 0}, {0, 1}}
	var pages [][]parquet.Value
	i := 0
	for _, page := range levels {
		var values []parquet.Value
		for _, rep := range page {
			values = append(values, parquet.Int64Value(int64(i)).Level(rep, 1, 0))
			i++
		}
		pages = append(pages, values)
	}
	rowValues := [][]int64{{0, 1, 2}, {3}, {4, 5}, {6}, {7, 8}}
	for lo := int64(0); lo < 5; lo++ {
		for hi := lo + 1; hi <= 5; hi++ {
			var got []int64
			row := int64(-1)
			for _, page := range pages {
				if row >= hi-1 {
					break
				}
				for _, v := range rowsOf(page, &row, lo, hi) {
					got = append(got, v.Int64())
				}
			}
			var want []int64
			for r := lo; r < hi; r++ {
				want = append(want, rowValues[r]...)
			}
			assert.Equal(t, want, got, "rows [%d, %d)", lo, hi)
		}
	}
}
