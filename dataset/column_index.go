package dataset

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// Column indexes of columns without bounds.
//
// parquet-go writes a column index for every column, also for those whose bounds it is told to
// skip (SkipPageBounds: free text, trace and span ids, and the statistics columns holding a value
// too long for statistics, long_bounds.go): every page of such a column then has "" as its min
// and max. parquet-mr (Spark) filters pages with the column index by default, so in Spark
// `WHERE provenance.trace_id = '…'` or `WHERE workflow_name = '…'` skipped every page and
// returned no row, with no error. So a column chunk without min/max statistics in the footer
// (SkipPageBounds leaves them out) gets no column index: when the file is closed, its column
// index is taken out of the page index and the footer no longer names it. Readers read its pages
// unfiltered, as they do for a column without statistics.

// closeWithoutUnboundedIndexes closes pw, a writer of cw, taking the column indexes of the
// columns without bounds out of what it writes at close (the page index and the footer).
func closeWithoutUnboundedIndexes(pw interface{ Flush() error }, closeParquet func() error, cw *countingWriter) error {
	if err := pw.Flush(); err != nil { // the last row group goes to the file, not to the tail
		return err
	}
	cw.tail, cw.capture = []byte{}, true
	err := closeParquet()
	tail, at := cw.tail, cw.n
	cw.tail, cw.capture = nil, false
	if err != nil {
		return err
	}
	if tail, err = withoutUnboundedIndexes(tail, at); err != nil {
		return fmt.Errorf("rewriting the page index: %w", err)
	}
	_, err = cw.Write(tail)
	return err
}

// withoutUnboundedIndexes rewrites the tail of a Parquet file written by parquet-go, which starts
// at offset at of the file and holds its page index (the column indexes of every column chunk,
// then their offset indexes) and its footer: the column indexes of the chunks without min/max
// statistics are taken out (but the first chunk's, whose offset parquet-go reads the others
// from), and the offsets of what follows them in the footer moved accordingly.
func withoutUnboundedIndexes(tail []byte, at int64) ([]byte, error) {
	if len(tail) < 8 || string(tail[len(tail)-4:]) != "PAR1" {
		return nil, errors.New("no footer")
	}
	footerAt := len(tail) - 8 - int(binary.LittleEndian.Uint32(tail[len(tail)-8:]))
	if footerAt < 0 {
		return nil, errors.New("footer longer than the tail")
	}
	var md format.FileMetaData
	if err := thrift.Unmarshal(new(thrift.CompactProtocol), tail[footerAt:len(tail)-8], &md); err != nil {
		return nil, err
	}
	var chunks []*format.ColumnChunk
	for i := range md.RowGroups {
		for j := range md.RowGroups[i].Columns {
			chunks = append(chunks, &md.RowGroups[i].Columns[j])
		}
	}
	if len(chunks) == 0 || chunks[0].ColumnIndexOffset == 0 {
		return tail, nil // no page index
	}
	// The layout parquet-go writes, checked: column indexes, offset indexes, footer, one after
	// the other.
	start, next := chunks[0].ColumnIndexOffset-at, chunks[0].ColumnIndexOffset-at
	for _, c := range chunks {
		if c.ColumnIndexOffset-at != next || c.ColumnIndexLength < 0 {
			return nil, errors.New("column indexes not one after the other")
		}
		next += int64(c.ColumnIndexLength)
	}
	offsetsAt := next
	for _, c := range chunks {
		if c.OffsetIndexOffset-at != next || c.OffsetIndexLength < 0 {
			return nil, errors.New("offset indexes not after the column indexes")
		}
		next += int64(c.OffsetIndexLength)
	}
	if start < 0 || next != int64(footerAt) {
		return nil, errors.New("page index not right before the footer")
	}
	kept := make([]byte, 0, offsetsAt-start)
	for i, c := range chunks {
		index := tail[c.ColumnIndexOffset-at : c.ColumnIndexOffset-at+int64(c.ColumnIndexLength)]
		if i > 0 && c.MetaData.Statistics.MinValue == nil && c.MetaData.Statistics.MaxValue == nil {
			c.ColumnIndexOffset, c.ColumnIndexLength = 0, 0
			continue
		}
		c.ColumnIndexOffset = at + start + int64(len(kept))
		kept = append(kept, index...)
	}
	shift := start + int64(len(kept)) - offsetsAt
	for _, c := range chunks {
		c.OffsetIndexOffset += shift
	}
	footer, err := thrift.Marshal(new(thrift.CompactProtocol), &md)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, int(start)+len(kept)+footerAt-int(offsetsAt)+len(footer)+8)
	out = append(out, tail[:start]...)
	out = append(out, kept...)
	out = append(out, tail[offsetsAt:footerAt]...)
	out = append(out, footer...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(footer)))
	return append(out, "PAR1"...), nil
}
