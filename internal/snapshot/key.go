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
	return "sha256:" + hex.EncodeToString(sum[:])
}

// RecordHash is "sha256:" + hex(sha256(JCS(record without "hash"))).
func RecordHash(record map[string]any) (string, error) {
	c := make(map[string]any, len(record))
	for k, v := range record {
		if k != "hash" {
			c[k] = v
		}
	}
	b, err := Canonical(c)
	if err != nil {
		return "", err
	}
	return SHA256Prefixed(b), nil
}

// FileHash is "sha256:" + hex(sha256(JCS({"version", "snapshots": [record hashes]}))).
func FileHash(version string, recordHashes []string) (string, error) {
	hs := make([]any, len(recordHashes))
	for i, h := range recordHashes {
		hs[i] = h
	}
	b, err := Canonical(map[string]any{"version": version, "snapshots": hs})
	if err != nil {
		return "", err
	}
	return SHA256Prefixed(b), nil
}

// DocumentHash hashes a document (manifest) without its "hash" member.
func DocumentHash(doc map[string]any) (string, error) { return RecordHash(doc) }
