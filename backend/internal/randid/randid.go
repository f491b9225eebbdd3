// Package randid makes the short random ids of local records (providers, SSH servers, saved
// logins, approvals): a prefix that says what the record is, and 12 random hex characters.
package randid

import (
	"crypto/rand"
	"encoding/hex"
)

// idBytes is 48 bits of randomness: unique enough for the records of one data dir, short
// enough to read in logs and type in a command.
const idBytes = 6

// New returns prefix + 12 random hex characters.
func New(prefix string) string {
	var b [idBytes]byte
	// crypto/rand.Read never fails since Go 1.24: on a system without entropy it crashes.
	rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}
