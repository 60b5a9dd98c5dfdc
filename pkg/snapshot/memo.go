package snapshot

import "sync"

// Memo returns the value build computes from s, computing it once per
// snapshot and key however many checks ask, concurrently or not: derived
// indexes (owners, endpoint readiness) are built once per scan. build must
// only read s. Keys should be values of an unexported type of the caller's
// package, as with context keys.
func Memo[T any](s *Snapshot, key any, build func() T) T {
	e, _ := s.memo.LoadOrStore(key, &memoEntry{})
	m := e.(*memoEntry)
	m.once.Do(func() { m.v = build() })
	return m.v.(T)
}

type memoEntry struct {
	once sync.Once
	v    any
}
