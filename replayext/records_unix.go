//go:build unix

package replayext

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// allocChunk maps n zeroed values of anonymous memory, outside the Go heap. It fails when the
// system refuses the mapping (address space, overcommit or cgroup limits).
func allocChunk[T any](n int) ([]T, error) {
	size := n * int(unsafe.Sizeof(*new(T)))
	if err := checkAlloc(size); err != nil {
		return nil, err
	}
	b, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return nil, allocError(size, err)
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n), nil
}

// freeChunk unmaps a chunk of allocChunk.
func freeChunk[T any](c []T) {
	_ = unix.Munmap(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(c))), len(c)*int(unsafe.Sizeof(c[0]))))
}
