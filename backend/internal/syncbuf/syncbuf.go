// Package syncbuf is a bytes buffer safe for concurrent use: where a test collects the log
// lines that a server's, a provider's or an engine's goroutines write while it reads them.
package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer behind a mutex; the zero value is empty and ready.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Bytes returns a copy of everything written so far.
func (b *Buffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.b.Bytes())
}
