package migrate

import (
	"sort"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/provider/registry"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// Version110 is format 1.1.0: the 1.0.0 layout with the required record
// field "endpoint" (DESIGN §12.2).
const Version110 = "1.1.0"

// Format 1.1.0 adds the required record field "endpoint" (DESIGN §12.2):
// the step writes the key endpoint the 1.0.0 rule derives from the record
// (openai + "messages" → /v1/chat/completions, openai + "prompt" →
// /v1/completions, anthropic → /v1/messages), so ids stay as they are and
// every record, file and manifest hash is recomputed.
func init() {
	RegisterRecordStep(&RecordStep{
		From:     snapshot.PreviousVersion,
		To:       Version110,
		Describe: "every record gets its key endpoint; hashes recomputed, ids unchanged",
		Summary:  "%d snapshot file(s) get their endpoint; ids unchanged, hashes recomputed",
		Up:       addEndpoint,
		Down:     dropEndpoint,
	})
}

func addEndpoint(p string, rec map[string]any) (string, *upgradeError) {
	if _, has := rec["endpoint"]; has {
		return "", &upgradeError{"/snapshots/0/endpoint", check.RuleSchema, "a 1.0.0 record has no endpoint field"}
	}
	request, ok := rec["request"].(map[string]any)
	e := registry.EndpointOf100(p, request)
	if !ok || e == "" {
		return "", &upgradeError{"/snapshots/0/request", check.RuleSchema, "the request is missing or its provider unknown; no endpoint can be derived"}
	}
	rec["endpoint"] = string(e)
	return "endpoint " + string(e), nil
}

func dropEndpoint(rec map[string]any) *upgradeError {
	delete(rec, "endpoint")
	return nil
}

func sortedEntryFiles(m map[string]snapshot.ManifestEntry) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
