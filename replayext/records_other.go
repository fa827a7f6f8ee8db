//go:build !unix

package replayext

// allocChunk allocates n values on the heap: anonymous mappings are used on Unix only.
func allocChunk[T any](n int) []T { return make([]T, n) }

func freeChunk[T any]([]T) {}
