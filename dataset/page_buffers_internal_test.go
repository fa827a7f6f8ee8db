package dataset

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
)

// fileModel is what a page buffer must behave as: a file's bytes and offset.
type fileModel struct {
	data []byte
	off  int
}

// FuzzPageBuffer runs a sequence of writes, seeks, reads and WriteTo calls, decoded from the
// input, on a page buffer and on a plain model of a file, and asserts every result is the
// same: bytes, counts, offsets and errors. Each sequence runs twice, the second time on a
// buffer whose chunks come back from the pool dirty, so that reuse cannot leak old bytes.
// Run: go test -run '^$' -fuzz FuzzPageBuffer -fuzztime 30s ./dataset/
func FuzzPageBuffer(f *testing.F) {
	f.Add([]byte{0, 0x10, 0x00, 1, 0, 0, 0, 2, 0x08, 0x00, 3})
	f.Add([]byte{0, 0xff, 0xff, 0, 0xff, 0xff, 1, 0, 0x10, 0x00, 2, 0xff, 0x00, 3, 1, 2, 0x00, 0x10})
	f.Add([]byte{1, 2, 0x40, 0x00, 0, 0x00, 0x20, 1, 1, 0xff, 0xff, 2, 0x00, 0x20})
	f.Fuzz(func(t *testing.T, ops []byte) {
		pool := &pageBufferPool{}
		for round := range 2 {
			b := pool.GetBuffer().(*pageBuffer)
			if round == 1 {
				for _, class := range pool.free {
					for _, c := range class {
						for i := range c {
							c[i] = 0xee
						}
					}
				}
			}
			runPageBufferOps(t, b, ops)
			pool.PutBuffer(b)
			if pool.kept > keptPageChunkBytes {
				t.Fatalf("pool keeps %d bytes, bound %d", pool.kept, keptPageChunkBytes)
			}
		}
	})
}

func runPageBufferOps(t *testing.T, b *pageBuffer, ops []byte) {
	m := &fileModel{}
	fill := byte(1)
	for len(ops) >= 3 {
		op, n := ops[0]%4, int(binary.BigEndian.Uint16(ops[1:3]))*4 // up to 256 KiB
		ops = ops[3:]
		switch op {
		case 0: // write n bytes
			p := make([]byte, n)
			for i := range p {
				p[i] = fill + byte(i)
			}
			fill++
			got, err := b.Write(p)
			if err != nil || got != n {
				t.Fatalf("Write(%d) = %d, %v", n, got, err)
			}
			if m.off > len(m.data) {
				m.data = append(m.data, make([]byte, m.off-len(m.data))...)
			}
			c := copy(m.data[m.off:], p)
			m.data = append(m.data, p[c:]...)
			m.off += n
		case 1: // seek: whence from the low bits of n, offset around the size
			whence, offset := n%3, int64(n/3)-int64(len(m.data)/2)
			got, err := b.Seek(offset, whence)
			base := []int{0, m.off, len(m.data)}[whence]
			want := int64(base) + offset
			if want < 0 {
				if !errors.Is(err, errNegativeOffset) {
					t.Fatalf("Seek(%d, %d) to %d: err %v", offset, whence, want, err)
				}
				continue
			}
			if err != nil || got != want {
				t.Fatalf("Seek(%d, %d) = %d, %v; want %d", offset, whence, got, err, want)
			}
			m.off = int(want)
		case 2: // read up to n bytes
			p := make([]byte, n)
			got, err := b.Read(p)
			want := 0
			if m.off < len(m.data) {
				want = min(n, len(m.data)-m.off)
			}
			switch {
			case n == 0 && (got != 0 || err != nil):
				t.Fatalf("Read of 0 bytes = %d, %v", got, err)
			case n > 0 && want == 0 && (got != 0 || err != io.EOF):
				t.Fatalf("Read at the end = %d, %v; want EOF", got, err)
			case want > 0 && (err != nil || got == 0 || got > want || !bytes.Equal(p[:got], m.data[m.off:m.off+got])):
				t.Fatalf("Read(%d) at %d of %d = %d, %v", n, m.off, len(m.data), got, err)
			}
			m.off += got
		case 3: // copy the rest out
			var out bytes.Buffer
			got, err := b.WriteTo(&out)
			want := []byte{}
			if m.off < len(m.data) {
				want = m.data[m.off:]
			}
			if err != nil || got != int64(len(want)) || !bytes.Equal(out.Bytes(), want) {
				t.Fatalf("WriteTo at %d of %d = %d, %v", m.off, len(m.data), got, err)
			}
			m.off += len(want)
		}
	}
	// Everything written reads back whole.
	if _, err := b.Seek(0, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	all, err := io.ReadAll(b)
	if err != nil || !bytes.Equal(all, m.data) {
		t.Fatalf("read back %d bytes, %v; wrote %d", len(all), err, len(m.data))
	}
}

// The chunk arithmetic: every offset falls in the chunk that holds it.
func TestPageChunkAt(t *testing.T) {
	for i := range 20 {
		start, size := pageChunkStart(i), pageChunkSize(i)
		if pageChunkStart(i+1) != start+size {
			t.Fatalf("chunk %d: [%d, %d) but chunk %d starts at %d", i, start, start+size, i+1, pageChunkStart(i+1))
		}
		for _, off := range []int{start, start + size/2, start + size - 1} {
			if c, at := pageChunkAt(off); c != i || at != off-start {
				t.Fatalf("pageChunkAt(%d) = %d, %d; want %d, %d", off, c, at, i, off-start)
			}
		}
	}
}

// The pool keeps chunks up to its bound, and a buffer from elsewhere is not taken.
func TestPagePoolKeepsWithinItsBound(t *testing.T) {
	pool := &pageBufferPool{}
	var held []io.ReadWriteSeeker
	for range 40 {
		b := pool.GetBuffer()
		if _, err := b.Write(make([]byte, 300<<10)); err != nil {
			t.Fatal(err)
		}
		held = append(held, b)
	}
	for _, b := range held {
		pool.PutBuffer(b)
	}
	kept := 0
	for _, class := range pool.free {
		for _, c := range class {
			kept += len(c)
		}
	}
	if kept != pool.kept || kept > keptPageChunkBytes || kept < keptPageChunkBytes-64<<10 {
		t.Fatalf("pool keeps %d bytes (counted %d), bound %d", kept, pool.kept, keptPageChunkBytes)
	}
	other := &pageBufferPool{}
	pool.PutBuffer(other.GetBuffer())
	if pool.kept != kept {
		t.Fatal("took another pool's buffer")
	}
}

// Writers in several goroutines share the pool (a segment is staged while a merge runs): each
// buffer reads back what its own goroutine wrote. Run with -race.
func TestPagePoolSharedByGoroutines(t *testing.T) {
	pool := &pageBufferPool{}
	errs := make(chan error, 8)
	for g := range 8 {
		go func() {
			for i := range 50 {
				b := pool.GetBuffer()
				want := bytes.Repeat([]byte{byte(g), byte(i)}, (g+1)*(i+1)*97)
				if _, err := b.Write(want); err != nil {
					errs <- err
					return
				}
				if _, err := b.Seek(0, io.SeekStart); err != nil {
					errs <- err
					return
				}
				if got, err := io.ReadAll(b); err != nil || !bytes.Equal(got, want) {
					errs <- errors.New("a buffer read back other bytes than its goroutine wrote")
					return
				}
				pool.PutBuffer(b)
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
