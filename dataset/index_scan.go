package dataset

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/parquet-go/parquet-go"
)

// ReplayIndexRow is the projection of a case row that a replay server keeps in memory: what
// finds the case and its recorded model calls, and what listings filter on. parquet-go
// decodes only these columns, so content, reasons, provenance and usage are never read.
type ReplayIndexRow struct {
	CaseID    string            `parquet:"case_id"`
	Status    string            `parquet:"status"`
	StartTime time.Time         `parquet:"start_time,timestamp(microsecond)"`
	AgentName string            `parquet:"agent_name,optional"`
	Steps     []ReplayIndexStep `parquet:"steps,list"`
}

// ReplayIndexStep is the projection of one step: its index, kind and call-site id and fields.
// CallSiteID is empty in files written before call-site ids existed.
type ReplayIndexStep struct {
	Index          int64    `parquet:"index"`
	Kind           string   `parquet:"kind"`
	CallSiteID     string   `parquet:"call_site_id,optional"`
	CallSiteFields []string `parquet:"call_site_fields,list"`
}

// ScanReplayIndex calls fn with each row's ReplayIndexRow, in file order. Rows are decoded
// indexBatch at a time into the same buffer, so memory holds a batch, not the file: fn must
// copy what it keeps. An error from fn stops the scan and is returned.
func ScanReplayIndex(path string, fn func(row int64, r *ReplayIndexRow) error) error {
	f, pf, err := open(path, parquet.SkipPageIndex(true))
	if err != nil {
		return err
	}
	defer f.Close()
	return scanReplayIndex(pf, path, fn)
}

// ScanReplayIndex scans a listed file (see ScanReplayIndex).
func (l *ObjectLister) ScanReplayIndex(ctx context.Context, path string, fn func(row int64, r *ReplayIndexRow) error) error {
	pf, err := l.open(ctx, path)
	if err != nil {
		return err
	}
	return scanReplayIndex(pf, path, fn)
}

func scanReplayIndex(pf *parquet.File, path string, fn func(row int64, r *ReplayIndexRow) error) error {
	r := parquet.NewGenericReader[ReplayIndexRow](pf)
	defer r.Close()
	buf := make([]ReplayIndexRow, indexBatch)
	var row int64
	for {
		n, err := r.Read(buf)
		for i := range buf[:n] {
			if ferr := fn(row, &buf[i]); ferr != nil {
				return ferr
			}
			row++
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: reading row %d: %w", path, row, err)
		}
	}
}
