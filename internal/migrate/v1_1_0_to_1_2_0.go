package migrate

import (
	"strconv"
	"strings"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// Format 1.2.0 (DESIGN §13.4) adds optional record fields only — so far
// "defaults_applied" (the members the project's request defaults set,
// §13.2) —, none of which a 1.1.0 record can hold: the step keeps every
// record as it is and rewrites the version and every record, file and
// manifest hash; ids are unchanged. A later field of 1.2.0 that 1.1.0
// records must get is added in upTo120 (and taken out again in
// downTo110).
func init() {
	RegisterRecordStep(&RecordStep{
		From:     Version110,
		To:       snapshot.Version,
		Describe: "version and hashes rewritten (1.2.0 adds optional fields only); ids unchanged",
		Summary:  "%d snapshot file(s) move to format " + snapshot.Version + "; ids unchanged, hashes recomputed",
		Up:       upTo120,
		Down:     downTo110,
	})
}

// fields120 are the record fields format 1.2.0 adds; a 1.1.0 record has
// none of them. (Exchange records — endpoint "METHOD /route" — are new
// in 1.2.0 too: a 1.1.0 set holds none, and its endpoints are paths.)
var fields120 = []string{"defaults_applied", "occurrence"}

func upTo120(_ string, rec map[string]any) (string, *upgradeError) {
	for _, f := range fields120 {
		if _, has := rec[f]; has {
			return "", &upgradeError{"/snapshots/0/" + f, check.RuleSchema, "a 1.1.0 record has no " + f + " field"}
		}
	}
	if e, _ := rec["endpoint"].(string); !strings.HasPrefix(e, "/") {
		return "", &upgradeError{"/snapshots/0/endpoint", check.RuleSchema, "a 1.1.0 record's endpoint is a path, not " + strconv.Quote(e)}
	}
	return "", nil
}

func downTo110(rec map[string]any) *upgradeError {
	for _, f := range fields120 {
		if _, has := rec[f]; has {
			return &upgradeError{"/snapshots/0/" + f, check.RuleSchema, "a record migration wrote has no " + f + " field"}
		}
	}
	return nil
}
