package check

import (
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/traceforge/traceforge/internal/finding"
	"github.com/traceforge/traceforge/internal/schema"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// ParseManifest decodes and checks manifest bytes on their own: strict JSON,
// version, schema and the manifest hash. display names the file in findings.
// The manifest is returned whenever it is schema-valid (even with a hash
// finding); it is nil otherwise.
func ParseManifest(display string, data []byte, opts Options) (*snapshot.Manifest, finding.Findings) {
	return parseManifest(display, data, opts, false)
}

// ParseManifestAnyTimes is ParseManifest for the merge driver (DESIGN §12.9
// item 9): created_at and updated_at may be any RFC 3339 time — with a
// fraction of a second or an offset, as another tool or a hand edit may
// leave them — instead of the YYYY-MM-DDTHH:MM:SSZ traceforge writes. The
// manifest's hash is checked over the times as written; the Manifest keeps
// them so (MergeManifests writes the merged times in traceforge's form).
func ParseManifestAnyTimes(display string, data []byte, opts Options) (*snapshot.Manifest, finding.Findings) {
	return parseManifest(display, data, opts, true)
}

func parseManifest(display string, data []byte, opts Options, anyTimes bool) (*snapshot.Manifest, finding.Findings) {
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
	checked := v
	if anyTimes && doc != nil {
		// The schema sees the times as traceforge would write them.
		c := maps.Clone(doc)
		for _, k := range []string{"created_at", "updated_at"} {
			if s, ok := c[k].(string); ok {
				if t, err := time.Parse(time.RFC3339, s); err == nil {
					c[k] = snapshot.FormatTimestamp(t)
				}
			}
		}
		checked = c
	}
	for _, vi := range schema.ValidateManifest(checked) {
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
