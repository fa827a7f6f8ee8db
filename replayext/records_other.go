//go:build !unix

package replayext

import "unsafe"

// allocChunk allocates n values on the heap: anonymous mappings are used on Unix only.
func allocChunk[T any](n int) ([]T, error) {
	if err := checkAlloc(n * int(unsafe.Sizeof(*new(T)))); err != nil {
		return nil, err
	}
	return make([]T, n), nil
}

func freeChunk[T any]([]T) {}
