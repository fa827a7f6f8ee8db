package dataset

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// offsetIndexLoaders are the functions of this package that may load an offset index, by file
// and function: readErrors.offsetIndex, which registers it with the page header checks; those
// that load every index with the footer (readOffsetIndexes), before the checks are built, which
// register them all (pageHeaders.build, which only asks for the loaded ones: noReads).
var offsetIndexLoaders = []string{
	"unreadable.go:offsetIndex",
	"reader.go:readOffsetIndexes",
	"page_headers.go:build",
}

// An offset index loaded lazily (a chunk's OffsetIndex, or OffsetIndexFrom) is loaded through
// readErrors.offsetIndex: parquet-go's page readers seek to the pages it places, whose headers
// the checks decode only where they know headers start. parquet-go itself never loads one (it
// seeks with those loaded: FilePages.SeekToRow), so the package's own calls are all there is to
// check; a new call elsewhere fails here.
func TestOffsetIndexesAreLoadedThroughReadErrors(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	var loaders []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		require.NoError(t, err)
		f, err := parser.ParseFile(fset, name, src, 0)
		require.NoError(t, err)
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if call, ok := n.(*ast.CallExpr); ok {
					if sel, ok := call.Fun.(*ast.SelectorExpr); ok && (sel.Sel.Name == "OffsetIndex" || sel.Sel.Name == "OffsetIndexFrom") {
						loaders = append(loaders, name+":"+fn.Name.Name)
						if !slices.Contains(offsetIndexLoaders, name+":"+fn.Name.Name) {
							t.Errorf("%s: %s loads an offset index without readErrors.offsetIndex", fset.Position(call.Pos()), fn.Name.Name)
						}
					}
				}
				return true
			})
		}
	}
	assert.ElementsMatch(t, offsetIndexLoaders, loaders, "the loaders found")
}
