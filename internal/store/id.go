package store

import (
	"crypto/rand"
	"encoding/base32"
)

// idEncoding is lowercase base32 (RFC 4648 alphabet) without padding: URL-safe
// and unambiguous to read aloud.
var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// IDLen is the length of an id made by NewID.
const IDLen = 12

// NewID returns a new random id: 12 characters of lowercase base32, 60 bits
// from crypto/rand, so ids made on different machines and databases do not
// meet (two ids collide with probability 2⁻⁶⁰; PutRun refuses an id the
// store already holds, and PutRun with an empty id draws again).
func NewID() string {
	var b [8]byte
	rand.Read(b[:]) // never fails (crypto/rand panics rather)
	return idEncoding.EncodeToString(b[:])[:IDLen]
}

// ValidID reports whether id has the form NewID gives: 12 characters of
// a–z and 2–7. Imported runs get new ids, so every stored id has this form.
func ValidID(id string) bool {
	if len(id) != IDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || '2' <= c && c <= '7') {
			return false
		}
	}
	return true
}
