package config

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
)

// keyFileMode keeps key files readable by their owner alone.
const keyFileMode = 0o600

// ErrDamagedKeyFile means a key file holds no key of the expected size.
var ErrDamagedKeyFile = errors.New("the key file is damaged")

// LoadOrCreateKeyFile returns the size-byte key stored hex-encoded in path, creating it with
// fresh random bytes (mode 0600) if it does not exist. An existing file's mode is tightened
// back to 0600 if someone loosened it. A file with no key of that size is ErrDamagedKeyFile:
// the caller says what that key protects and what to do.
func LoadOrCreateKeyFile(path string, size int) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		key, derr := hex.DecodeString(strings.TrimSpace(string(b)))
		if derr != nil || len(key) != size {
			return nil, fmt.Errorf("%q: %w", path, ErrDamagedKeyFile)
		}
		return key, os.Chmod(path, keyFileMode)
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read key file %q: %w", path, err)
	}
	key := make([]byte, size)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, keyFileMode)
	if err != nil {
		return nil, fmt.Errorf("create key file %q: %w", path, err)
	}
	if _, err := f.WriteString(hex.EncodeToString(key) + "\n"); err != nil {
		f.Close()
		return nil, err
	}
	return key, f.Close()
}
