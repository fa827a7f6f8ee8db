package dataset_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/require"

	. "github.com/reprise-dev/reprise/dataset"
)

// corruptBases are published cases/ files the fuzzer corrupts: 25 cases of the fixture in row
// groups of 10, 10 and 5, compressed with each codec the writer offers: zstd and none (so that
// a flipped byte lands in values as well as in compressed bytes), then snappy and gzip.
var corruptBases struct {
	once  sync.Once
	files [4][]byte
	err   error
}

// baseCodecs are the codecs of corruptBases, in order.
var baseCodecs = []string{"zstd", "none", "snappy", "gzip"}

// corruptBase is the published file i picks: zstd when i is even and none when it is odd, or,
// when i has its high bit set (i&0x80, as a fuzz input's base byte may), snappy and gzip: the
// inputs of the fuzz corpus written before snappy and gzip were added keep their files.
func corruptBase(t *testing.T, i int) []byte {
	corruptBases.once.Do(func() {
		cases := manyCases(t)
		for j, compression := range baseCodecs {
			dir := t.TempDir()
			w, err := NewWriter(WriterConfig{
				Root: filepath.Join(dir, "data"), Staging: filepath.Join(dir, "data.staging"),
				Compression: compression, MaxRowsPerFile: 100, RowGroupRows: 10,
			})
			if err != nil {
				corruptBases.err = err
				return
			}
			res, err := w.Write(cases)
			if err == nil && len(res.Files) != 1 {
				err = fmt.Errorf("wrote %d files", len(res.Files))
			}
			if err == nil {
				corruptBases.files[j], err = os.ReadFile(res.Files[0].Path)
			}
			if err != nil {
				corruptBases.err = err
				return
			}
		}
	})
	require.NoError(t, corruptBases.err)
	return corruptBases.files[i%2+2*(i>>7&1)]
}

// Corruptions the fuzzer applies (how); with fromEnd set, off counts back from the file's end,
// where the footer is.
const (
	flipBytes      = iota // XOR data into the bytes at off
	truncate              // cut the file at off
	footerLength          // write off as the footer's length (the 4 bytes before the last magic)
	zeroRange             // zero len(data)*64 bytes from off
	overwriteBytes        // write data at off
	corruptions
	fromEnd = 0x80
)

func corrupt(good []byte, how uint8, off uint32, data []byte) []byte {
	b := append([]byte(nil), good...)
	at := int(off % uint32(len(b)+1))
	if how&fromEnd != 0 {
		at = len(b) - at
	}
	switch how &^ fromEnd % corruptions {
	case flipBytes:
		for i, x := range data {
			if at+i < len(b) {
				b[at+i] ^= x
			}
		}
	case truncate:
		b = b[:at]
	case footerLength:
		binary.LittleEndian.PutUint32(b[len(b)-8:], off)
	case zeroRange:
		clear(b[at:min(at+64*len(data), len(b))])
	case overwriteBytes:
		copy(b[min(at, len(b)):], data)
	}
	return b
}

// allocBound is how many bytes one read of a file of size bytes may allocate: 64 times its
// size, and 64 MiB for the footer of ~245 columns, the page buffers and the decoded rows (one
// read of the sound file allocates at most ~12 MiB: ReadCases). A read that fails is held to the
// same bound: a page header that claims more bytes than its column chunk holds is refused
// before parquet-go allocates them (pageHeaders).
func allocBound(size int) uint64 { return 64*uint64(size) + 64<<20 }

// allocatedBy is how many bytes read allocates. parquet-go pools its page buffers (a
// sync.Pool): a buffer of 1 GiB that one read allocated would serve the next read unseen, so
// two collections empty the pools first.
func allocatedBy(read func()) uint64 {
	runtime.GC()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	read()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// footerRows is the row count the file's footer claims, or false when parquet-go does not
// decode the footer (a panic of its own included).
func footerRows(b []byte) (rows int64, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	pf, err := parquet.OpenFile(bytesReaderAt(b), int64(len(b)), parquet.SkipBloomFilters(true), parquet.SkipPageIndex(true))
	if err != nil {
		return 0, false
	}
	return pf.NumRows(), true
}

type bytesReaderAt []byte

func (b bytesReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("negative offset")
	}
	if off >= int64(len(b)) {
		return 0, errors.New("EOF")
	}
	n := copy(p, b[off:])
	if n < len(p) {
		return n, errors.New("EOF")
	}
	return n, nil
}

// FuzzACorruptFileIsReadOrRefused corrupts a published cases/ file (flipped bytes, a cut, a
// forged footer length, a zeroed range, overwritten bytes) and reads it through every reader
// the components use: the receiver's scan (ScanReadableCases), the CLI's (ScanCases, ReadCases,
// ReadIndex), the replay extension's (ScanReplayIndex, OpenCaseFile and its ReadCase and
// ReadSummaries), the one-shot reads (ReadCase, ReadRows, ReadSummaries) and a restarted
// writer's (readCaseIDs). None panics or allocates beyond allocBound; each returns its rows or
// an error that wraps ErrUnreadable and names the file (the reads cannot fail here: a bare
// error would be retried forever); and the receiver's scan reads or reports lost every row the
// footer claims.
//
//	go test -run '^$' -fuzz '^FuzzACorruptFileIsReadOrRefused$' -fuzztime 10m -parallel 1 ./dataset/
func FuzzACorruptFileIsReadOrRefused(f *testing.F) {
	if raceBuild {
		// Under -race, checkptr makes parquet-go's unsafe.Slice of a value a corrupt page
		// decoded to (a nil pointer with a length, input 5ecff7151caba367) a fatal error, which
		// no recover catches; a build without it panics, and the reader recovers.
		f.Skip("parquet-go's unsafe.Slice of a corrupt value is fatal under checkptr (-race)")
	}
	for _, base := range []uint8{0, 1, 0x80, 0x81} { // zstd, none, snappy, gzip (corruptBase)
		f.Add(base, uint8(flipBytes), uint32(0), []byte{0xff})                  // the first magic
		f.Add(base, uint8(flipBytes|fromEnd), uint32(2), []byte{0xff})          // the last magic
		f.Add(base, uint8(flipBytes), uint32(4), []byte{0x55, 0xaa})            // the first page header
		f.Add(base, uint8(flipBytes), uint32(40), []byte{0x01})                 // the first page's data
		f.Add(base, uint8(flipBytes), uint32(5000), []byte{0x10, 0x20, 0x30})   // a later page
		f.Add(base, uint8(flipBytes|fromEnd), uint32(200), []byte{0x7f})        // in the footer
		f.Add(base, uint8(flipBytes|fromEnd), uint32(3000), []byte{0xff, 0xff}) // in the footer
		f.Add(base, uint8(truncate|fromEnd), uint32(1), []byte{})               // the last byte cut
		f.Add(base, uint8(truncate), uint32(4096), []byte{})                    // most of the file cut
		f.Add(base, uint8(footerLength), uint32(0xffffffff), []byte{})          // a footer longer than the file
		f.Add(base, uint8(footerLength), uint32(12), []byte{})                  // a short footer
		f.Add(base, uint8(zeroRange|fromEnd), uint32(1000), []byte{0, 0})       // a zeroed piece of the footer
		f.Add(base, uint8(zeroRange), uint32(4), []byte{0})                     // a zeroed page header
		f.Add(base, uint8(overwriteBytes|fromEnd), uint32(500), []byte{0x19, 0xff, 0xff, 0xff, 0x0f})
	}
	f.Fuzz(func(t *testing.T, base, how uint8, off uint32, data []byte) {
		good := corruptBase(t, int(base))
		b := corrupt(good, how, off, data)
		path := filepath.Join(t.TempDir(), "corrupt.parquet")
		require.NoError(t, os.WriteFile(path, b, 0o644))
		readEveryWay(t, path, b)
	})
}

// readEveryWay reads the data file at path, whose bytes are b, through every reader the
// components use (see FuzzACorruptFileIsReadOrRefused) and returns each one's error by its
// name. None may allocate beyond allocBound (each read counted on its own), or return an error
// that does not wrap ErrUnreadable and name the file; the receiver's scan reads or reports lost
// every row the footer claims.
func readEveryWay(t *testing.T, path string, b []byte) map[string]error {
	t.Helper()
	errs := map[string]error{}
	claimed, footerOK := footerRows(b)

	check := func(name string, read func() error) {
		t.Helper()
		var err error
		if got, bound := allocatedBy(func() { err = read() }), allocBound(len(b)); got > bound {
			t.Errorf("%s allocated %d bytes reading a file of %d bytes (bound %d)", name, got, len(b), bound)
		}
		errs[name] = err
		if err != nil && (!errors.Is(err, ErrUnreadable) || !containsPath(err, path)) {
			t.Errorf("%s: an error that does not wrap ErrUnreadable or does not name the file: %v", name, err)
		}
	}

	// The receiver's scan: every row the footer claims is read or reported lost.
	var read, lost int64
	check("ScanReadableCases", func() error {
		err := ScanReadableCases(path, 0, 7, func(int64, *CaseRow) error { read++; return nil },
			func(from, to int64, _ error) { lost += to - from })
		if err == nil && footerOK && read != claimed {
			t.Errorf("ScanReadableCases read %d rows of %d and returned no error", read, claimed)
		}
		if err != nil && lost > 0 && read+lost != claimed {
			t.Errorf("ScanReadableCases read %d rows and reported %d lost of the %d the footer claims", read, lost, claimed)
		}
		return err
	})
	check("ScanCases", func() error {
		n := int64(0)
		err := ScanCases(path, 0, 7, func(int64, *CaseRow) error { n++; return nil })
		if err == nil && footerOK && n != claimed {
			t.Errorf("ScanCases read %d rows of %d and returned no error", n, claimed)
		}
		return err
	})
	check("ReadCases", func() error {
		rows, err := ReadCases(path)
		if err == nil && footerOK && int64(len(rows)) != claimed {
			t.Errorf("ReadCases read %d rows of %d and returned no error", len(rows), claimed)
		}
		return err
	})
	check("ReadIndex", func() error {
		entries, err := ReadIndex(path)
		if err == nil && footerOK && int64(len(entries)) != claimed {
			t.Errorf("ReadIndex read %d rows of %d and returned no error", len(entries), claimed)
		}
		return err
	})
	check("ScanReplayIndex", func() error {
		n := int64(0)
		err := ScanReplayIndex(path, func(int64, *ReplayIndexRow) error { n++; return nil })
		if err == nil && footerOK && n != claimed {
			t.Errorf("ScanReplayIndex read %d rows of %d and returned no error", n, claimed)
		}
		return err
	})
	check("readCaseIDs", func() error {
		n, err := ReadCaseIDCount(path)
		if err == nil && footerOK && int64(n) != claimed {
			t.Errorf("readCaseIDs read %d rows of %d and returned no error", n, claimed)
		}
		return err
	})
	rows := []int64{0, 9, 10, 24}
	check("ReadCase", func() error { _, err := ReadCase(path, 12); return outOfRange(err, claimed, 12) })
	check("ReadRows", func() error { _, err := ReadRows(path, rows); return outOfRange(err, claimed, 24) })
	check("ReadSummaries", func() error { _, err := ReadSummaries(path, rows); return outOfRange(err, claimed, 24) })
	check("OpenCaseFile", func() error {
		cf, err := OpenCaseFile(path)
		if err != nil {
			return err
		}
		defer cf.Close()
		if _, err := cf.ReadCase(12); outOfRange(err, claimed, 12) != nil {
			return err
		}
		_, err = cf.ReadSummaries(rows)
		return outOfRange(err, claimed, 24)
	})
	return errs
}

// outOfRange is err, or nil when it is the refusal of a row past the rows the footer claims
// (a forged row count: the file's error is then the footer's, reported by the other reads).
func outOfRange(err error, claimed, row int64) error {
	if err != nil && row >= claimed && !errors.Is(err, ErrUnreadable) {
		return nil
	}
	return err
}

func containsPath(err error, path string) bool { return strings.Contains(err.Error(), path) }
