package snapshot

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"unicode/utf8"
)

// providers are the folders a snapshot set may hold, one per provider
// (DESIGN §12.2), in alphabetical order. The provider registry registers
// them (RegisterProviders) when it is initialised: the snapshot layer lies
// below the providers and names none itself (DESIGN §13.1).
var providers []string

// RegisterProviders adds provider folder names (lowercase letters and
// digits). It is meant for package initialisation, before any set is read.
func RegisterProviders(names ...string) {
	for _, n := range names {
		if !slices.Contains(providers, n) {
			providers = append(providers, n)
		}
	}
	slices.Sort(providers)
}

// Providers returns the registered provider folders in alphabetical order.
// The slice must not be modified.
func Providers() []string { return providers }

// ValidProvider reports whether p is a registered provider folder.
func ValidProvider(p string) bool { return slices.Contains(providers, p) }

// ValidID reports whether id is 12 lowercase hex characters (the pattern
// ^[0-9a-f]{12}$, tested byte by byte: it runs for every file checked).
func ValidID(id string) bool {
	if len(id) != 12 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// IDOf returns the 12-character id of a full request key.
func IDOf(key string) string { return key[:12] }

// SHA256Prefixed returns "sha256:" + hex(sha256(b)).
func SHA256Prefixed(b []byte) string {
	sum := sha256.Sum256(b)
	var out [len("sha256:") + 2*sha256.Size]byte // one allocation, not three
	copy(out[:], "sha256:")
	hex.Encode(out[len("sha256:"):], sum[:])
	return string(out[:])
}

// RecordHash is "sha256:" + hex(sha256(JCS(record without "hash"))). The
// members are canonicalized as the object they form without copying the map
// (appendCanonicalWithout), in Canonical's pooled buffer.
func RecordHash(record map[string]any) (string, error) {
	bp := canonicalBufs.Get().(*[]byte)
	b, err := appendCanonicalWithout((*bp)[:0], record, "hash")
	if err != nil {
		releaseCanonical(bp, nil)
		return "", err
	}
	h := SHA256Prefixed(b)
	releaseCanonical(bp, b)
	return h, nil
}

// appendCanonicalWithout appends the RFC 8785 bytes of the object x without
// its member skip: what AppendCanonical writes for a copy of x without it.
func appendCanonicalWithout(dst []byte, x map[string]any, skip string) ([]byte, error) {
	return appendCanonicalObject(dst, x, skip, true, nil)
}

// FileHash is "sha256:" + hex(sha256(JCS({"version", "snapshots": [record hashes]}))),
// the canonical bytes written directly (members in JCS order: "snapshots"
// sorts before "version").
func FileHash(version string, recordHashes []string) (string, error) {
	bp := canonicalBufs.Get().(*[]byte)
	b := append((*bp)[:0], `{"snapshots":[`...)
	var err error
	for i, h := range recordHashes {
		if i > 0 {
			b = append(b, ',')
		}
		if b, err = AppendCanonicalString(b, h); err != nil {
			releaseCanonical(bp, nil)
			return "", err
		}
	}
	b = append(b, `],"version":`...)
	if b, err = AppendCanonicalString(b, version); err != nil {
		releaseCanonical(bp, nil)
		return "", err
	}
	b = append(b, '}')
	h := SHA256Prefixed(b)
	releaseCanonical(bp, b)
	return h, nil
}

// DocumentHash hashes a document (manifest) without its "hash" member.
func DocumentHash(doc map[string]any) (string, error) { return RecordHash(doc) }

// appendCanonicalObject appends the canonical bytes of object x, without
// its member skip when skipping. The members are gathered once (no lookup
// per key afterwards) and sorted; up to 16 of them in an array on the stack
// (most objects). Every key is checked before any value is written.
func appendCanonicalObject(dst []byte, x map[string]any, skip string, skipping bool, flush func([]byte) []byte) ([]byte, error) {
	var small [16]member
	ms := small[:0]
	ascii := true
	for k, v := range x {
		if skipping && k == skip {
			continue
		}
		if !isASCII(k) {
			if !utf8.ValidString(k) {
				return nil, fmt.Errorf("canonicalize: object key is not valid UTF-8")
			}
			ascii = false
		}
		ms = append(ms, member{k, v})
	}
	sortMembers(ms, ascii)
	dst = append(dst, '{')
	for i, m := range ms {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJCSString(dst, m.k)
		dst = append(dst, ':')
		var err error
		if dst, err = appendCanonical(dst, m.v, flush); err != nil {
			return nil, err
		}
		if flush != nil && len(dst) >= canonicalChunk {
			dst = flush(dst)
		}
	}
	return append(dst, '}'), nil
}
