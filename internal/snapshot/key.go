package snapshot

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
)

// Providers allowed in a snapshot set; each is a folder of the set
// (DESIGN §12.2).
var Providers = []string{"anthropic", "gemini", "ollama", "openai"}

// ValidProvider reports whether p is an allow-listed provider name.
func ValidProvider(p string) bool {
	switch p {
	case "openai", "anthropic", "gemini", "ollama":
		return true
	}
	return false
}

var idPattern = regexp.MustCompile(`^[0-9a-f]{12}$`)

// ValidID reports whether id is 12 lowercase hex characters.
func ValidID(id string) bool { return len(id) == 12 && idPattern.MatchString(id) }

// RequestHeaderNames are the only request headers a record may store; they
// join the key (DESIGN §11 "Keys and lookups").
var RequestHeaderNames = []string{"anthropic-beta", "anthropic-version"}

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

// canonicalHash is SHA256Prefixed(Canonical(v)) without a copy of the
// canonical bytes: they are hashed in Canonical's pooled buffer.
func canonicalHash(v any) (string, error) {
	bp, b, err := scratchCanonical(v)
	if err != nil {
		return "", err
	}
	h := SHA256Prefixed(b)
	releaseCanonical(bp, b)
	return h, nil
}

// RecordHash is "sha256:" + hex(sha256(JCS(record without "hash"))).
func RecordHash(record map[string]any) (string, error) {
	c := make(map[string]any, len(record))
	for k, v := range record {
		if k != "hash" {
			c[k] = v
		}
	}
	return canonicalHash(c)
}

// FileHash is "sha256:" + hex(sha256(JCS({"version", "snapshots": [record hashes]}))).
func FileHash(version string, recordHashes []string) (string, error) {
	hs := make([]any, len(recordHashes))
	for i, h := range recordHashes {
		hs[i] = h
	}
	return canonicalHash(map[string]any{"version": version, "snapshots": hs})
}

// DocumentHash hashes a document (manifest) without its "hash" member.
func DocumentHash(doc map[string]any) (string, error) { return RecordHash(doc) }
