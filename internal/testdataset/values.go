package testdataset

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

// DecodedValues reads every row of every Parquet file under root with a Parquet reader and
// returns the bytes of all its values, one a line, so a search does not depend on the files'
// compression or encoding.
func DecodedValues(t testing.TB, root string) (values []byte, rows int) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".parquet") {
			return err
		}
		for _, rg := range OpenParquet(t, path).RowGroups() {
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
