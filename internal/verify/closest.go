package verify

import (
	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/registry"
	"github.com/traceforge/traceforge/internal/render"
	"github.com/traceforge/traceforge/internal/snapshot"
	"github.com/traceforge/traceforge/internal/source"
)

// keyDocument is what a drift diff compares: the key object (provider,
// endpoint, request with the key-only normalization, headers), so the diff
// shows exactly what made the keys differ and nothing the key ignores
// (stream flags, provider-generated tool-call ids).
func keyDocument(p string, e provider.Endpoint, request, headers map[string]any) string {
	obj, err := registry.KeyObject(p, e, request, headers, nil)
	if err != nil {
		return ""
	}
	b, err := snapshot.MarshalPretty(obj)
	if err != nil {
		return ""
	}
	return string(b)
}

// messagesText is the part of a request the last closeness tier compares:
// the conversation (chat and Messages "messages", completions "prompt",
// Responses and embeddings "input") and the system prompt ("system",
// Responses "instructions").
func messagesText(request map[string]any) string {
	var v any
	for _, k := range []string{"messages", "prompt", "input"} {
		if m, ok := request[k]; ok {
			v = m
			break
		}
	}
	obj := map[string]any{"messages": v}
	for _, k := range []string{"system", "instructions"} {
		if s, ok := request[k]; ok {
			obj[k] = s
		}
	}
	b, err := snapshot.MarshalPretty(obj)
	if err != nil {
		return ""
	}
	return string(b)
}

// Closest returns the snapshot of the same provider closest to req: one
// from the same source first, then one with the same model and endpoint,
// then the one whose messages are most similar; ties go to the first by
// file name. src may be nil (the request carried no X-Traceforge-Source).
// nil when the set has no snapshot of req's provider.
func Closest(req *provider.Request, src *source.Source, snaps []*check.Snapshot) *check.Snapshot {
	model, _ := req.Body["model"].(string)
	msgs := messagesText(req.Body)
	var best *check.Snapshot
	bestTier, bestSim := -1, -1.0
	for _, s := range snaps {
		if s.Provider != string(req.Provider) || s.Record == nil {
			continue
		}
		tier := 0
		if src != nil && s.Record.Source == *src {
			tier += 2
		}
		if m, _ := s.Record.Request["model"].(string); m == model && provider.Endpoint(s.Record.Endpoint) == req.Endpoint {
			tier++
		}
		if tier < bestTier {
			continue
		}
		sim := render.Similarity(messagesText(s.Record.Request), msgs)
		if tier > bestTier || sim > bestSim {
			best, bestTier, bestSim = s, tier, sim
		}
	}
	return best
}

// DriftDiff is the unified diff from snapshot s to the request req.
func DriftDiff(display string, s *check.Snapshot, req *provider.Request) string {
	a := keyDocument(s.Provider, provider.Endpoint(s.Record.Endpoint), s.Record.Request, s.Record.RequestHeaders)
	b := keyDocument(string(req.Provider), req.Endpoint, req.Body, req.Headers)
	return render.UnifiedDiff(display+"/"+s.Rel, "request "+req.ID(), a, b)
}
