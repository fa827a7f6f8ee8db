package scrubbing

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/require"
)

// decodedRows reads every row of every Parquet file under root with a Parquet reader and
// returns the bytes of all its values, so a search does not depend on the files' compression
// or encoding.
func decodedRows(t *testing.T, root string) (values []byte, rows int) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".parquet") {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		info, err := f.Stat()
		if err != nil {
			return err
		}
		pf, err := parquet.OpenFile(f, info.Size())
		if err != nil {
			return err
		}
		for _, rg := range pf.RowGroups() {
			reader := rg.Rows()
			buf := make([]parquet.Row, 16)
			for {
				n, err := reader.ReadRows(buf)
				for _, row := range buf[:n] {
					rows++
					for _, v := range row {
						if !v.IsNull() {
							values = append(append(values, v.Bytes()...), '\n')
						}
					}
				}
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					reader.Close()
					return err
				}
			}
			reader.Close()
		}
		return nil
	}))
	return values, rows
}
