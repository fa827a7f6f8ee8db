package dataset

import (
	"io"
	"reflect"
	"sync"

	"github.com/parquet-go/parquet-go"
)

// Parquet writers are reused across files. Building one allocates the buffers, dictionaries
// and metadata of every column (~240 for cases/), about a fifth of what writing a batch
// allocated; a writer that finished a file is reset to write the next one instead
// (parquet-go's GenericWriter.Reset is meant for it). A sync.Pool holds them, so idle writers
// go with the next garbage collections rather than holding memory between bursts.

// writerPools holds one pool per row type and option set.
type writerPools struct {
	pools sync.Map // writerKey → *sync.Pool
}

// writerKey names a pool. An option set is known by the address of its first element: a
// Writer builds each of its option lists once and never changes them.
type writerKey struct {
	row  reflect.Type
	opts *parquet.WriterOption
}

func (p *writerPools) pool(row reflect.Type, opts []parquet.WriterOption) *sync.Pool {
	key := writerKey{row, &opts[0]}
	if pool, ok := p.pools.Load(key); ok {
		return pool.(*sync.Pool)
	}
	pool, _ := p.pools.LoadOrStore(key, &sync.Pool{})
	return pool.(*sync.Pool)
}

// pooledWriter is a writer of rows of type T into out, with opts, and the function that gives
// it back once its file is complete.
func pooledWriter[T any](p *writerPools, out io.Writer, opts []parquet.WriterOption) (pw *parquet.GenericWriter[T], release func()) {
	pool := p.pool(reflect.TypeFor[T](), opts)
	pw, ok := pool.Get().(*parquet.GenericWriter[T])
	if ok {
		pw.Reset(out)
	} else {
		pw = parquet.NewGenericWriter[T](out, opts...)
	}
	return pw, func() {
		pw.Reset(io.Discard) // let go of the file
		pool.Put(pw)
	}
}
