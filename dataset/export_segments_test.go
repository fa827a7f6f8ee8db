package dataset

// Hooks for the external tests of staged segments (segments.go).

// SetSyncStaging replaces the fsync of staging that makes a segment's rename durable; an error
// simulates a failed fsync.
func SetSyncStaging(w *Writer, fn func(dir string) error) { w.syncStaging = fn }

const SegmentPrefix, UnreadablePrefix = segmentPrefix, unreadablePrefix
