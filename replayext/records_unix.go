//go:build unix

package replayext

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// allocChunk maps n zeroed values of anonymous memory, outside the Go heap. A failure is the
// Go runtime's own out-of-memory condition, which is fatal too.
func allocChunk[T any](n int) []T {
	b, err := unix.Mmap(-1, 0, n*int(unsafe.Sizeof(*new(T))), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		panic(fmt.Sprintf("replay index: mapping %d values: %v", n, err))
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n)
}

// freeChunk unmaps a chunk of allocChunk.
func freeChunk[T any](c []T) {
	_ = unix.Munmap(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(c))), len(c)*int(unsafe.Sizeof(c[0]))))
}
