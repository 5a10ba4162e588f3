package check

import (
	"errors"
	"fmt"

	"github.com/traceforge/traceforge/internal/finding"
	"github.com/traceforge/traceforge/internal/schema"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// ParseManifest decodes and checks manifest bytes on their own: strict JSON,
// version, schema and the manifest hash. display names the file in findings.
// The manifest is returned whenever it is schema-valid (even with a hash
// finding); it is nil otherwise.
func ParseManifest(display string, data []byte, opts Options) (*snapshot.Manifest, finding.Findings) {
	v, err := snapshot.Decode(data)
	if err != nil {
		f := finding.Finding{File: display, Rule: RuleJSON, Severity: finding.Error, Message: err.Error(), Fix: "run: traceforge snapshot reindex"}
		var de *snapshot.DecodeError
		if errors.As(err, &de) {
			f.Pointer = de.Pointer
			f.Message = fmt.Sprintf("%s at line %d, column %d", de.Reason, de.Line, de.Column)
		}
		return nil, finding.Findings{f}
	}
	doc, _ := v.(map[string]any)
	if ver, ok := doc["version"].(string); ok {
		if f := VersionFinding(display, "/version", ver, opts); f != nil {
			return nil, finding.Findings{*f}
		}
	}
	var fs finding.Findings
	for _, vi := range schema.ValidateManifest(v) {
		fs = append(fs, finding.Finding{File: display, Pointer: vi.Pointer, Rule: RuleSchema, Severity: finding.Error, Message: vi.Reason, Fix: "run: traceforge snapshot reindex"})
	}
	if len(fs) > 0 {
		return nil, fs
	}
	m := snapshot.ManifestFromValue(doc)
	if h, err := manifestHash(doc); err == nil && h != m.Hash {
		fs = append(fs, finding.Finding{File: display, Pointer: "/hash", Rule: RuleManifestHash, Severity: finding.Error,
			Message: fmt.Sprintf("manifest hash mismatch: stored %s, computed %s", m.Hash, h), Fix: "run: traceforge snapshot reindex"})
	}
	return m, fs
}

// manifestHash is snapshot.DocumentHash, with the canonical text streamed
// into the hash (snapshot.CanonicalSHA256) instead of built whole: 20 MB
// at 100k snapshots.
func manifestHash(doc map[string]any) (string, error) {
	c := make(map[string]any, len(doc))
	for k, v := range doc {
		if k != "hash" {
			c[k] = v
		}
	}
	return snapshot.CanonicalSHA256(c)
}
