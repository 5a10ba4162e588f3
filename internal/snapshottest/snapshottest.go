// Package snapshottest builds valid snapshot sets for tests and benchmarks.
package snapshottest

import (
	"fmt"
	"time"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/registry"
	"github.com/traceforge/traceforge/internal/snapshot"
	"github.com/traceforge/traceforge/internal/source"
)

// Item is one call to put in a set.
type Item struct {
	Provider string
	// Endpoint is the key endpoint; "" = the format 1.0.0 rule
	// (registry.EndpointOf100: chat for "messages", completions for
	// "prompt", messages for Anthropic).
	Endpoint provider.Endpoint
	// KeyContext resolves a Responses previous_response_id (nil = none).
	KeyContext *provider.KeyContext
	Request    map[string]any
	Headers    map[string]any
	Response   snapshot.Response
	Source     source.Source
	Time       time.Time
}

// BaseTime is the timestamp of generated records.
var BaseTime = time.Date(2026, 1, 9, 10, 30, 0, 0, time.UTC)

// OpenAIChat returns a deterministic OpenAI chat item for prompt.
func OpenAIChat(prompt string) Item {
	return Item{
		Provider: "openai",
		Request: map[string]any{
			"model": "gpt-4o-mini",
			"messages": []any{
				map[string]any{"role": "system", "content": "You are a precise summarization assistant."},
				map[string]any{"role": "user", "content": prompt},
			},
			"temperature": 0,
			"max_tokens":  100,
			"seed":        42,
		},
		Response: snapshot.Response{Fields: snapshot.Fields{
			Content: "Summary: " + prompt, TokensUsed: 30, FinishReason: "stop",
			Usage: map[string]any{"prompt_tokens": 20, "completion_tokens": 10, "total_tokens": 30},
			Model: "gpt-4o-mini-2024-07-18",
		}, LatencyMS: 450},
		Source: source.Source{File: "src/agents/summarizer.py", Line: 12, Function: "generate_summary"},
		Time:   BaseTime,
	}
}

// AnthropicMessage returns a deterministic Anthropic item for prompt.
func AnthropicMessage(prompt string) Item {
	return Item{
		Provider: "anthropic",
		Request: map[string]any{
			"model":       "claude-sonnet-4-5",
			"max_tokens":  256,
			"temperature": 0,
			"system":      "Answer in one sentence.",
			"messages":    []any{map[string]any{"role": "user", "content": prompt}},
		},
		Headers: map[string]any{"anthropic-version": "2023-06-01"},
		Response: snapshot.Response{Fields: snapshot.Fields{
			Content: "Answer: " + prompt, TokensUsed: 40, FinishReason: "end_turn",
			Usage: map[string]any{"input_tokens": 25, "output_tokens": 15},
			Model: "claude-sonnet-4-5-20250929",
		}, LatencyMS: 600},
		Source: source.Source{File: "app/ask.ts", Line: 7, Function: "ask"},
		Time:   BaseTime,
	}
}

// Build returns the file document and id of an item.
func Build(it Item) (doc map[string]any, id string, err error) {
	req := cloneMap(it.Request)
	e := it.Endpoint
	if e == "" {
		e = registry.EndpointOf100(it.Provider, req)
	}
	registry.NormalizeStored(it.Provider, e, req)
	rec, key, err := registry.NewRecord(it.Provider, e, it.Time, it.Source, req, it.Headers, it.Response, it.KeyContext)
	if err != nil {
		return nil, "", err
	}
	doc, err = snapshot.FileDocument(rec)
	return doc, snapshot.IDOf(key), err
}

// File returns an item's snapshot file as written to disk and its path in
// the set (<provider>/<id>.json).
func File(it Item) (rel string, data []byte, err error) {
	doc, id, err := Build(it)
	if err != nil {
		return "", nil, err
	}
	data, err = snapshot.MarshalFile(doc)
	return snapshot.RelPath(it.Provider, id), data, err
}

// WriteSet writes items as a complete set (files + manifest) into dir.
func WriteSet(dir string, items ...Item) ([]snapshot.ManifestEntry, error) {
	st := &snapshot.Store{Dir: dir}
	var entries []snapshot.ManifestEntry
	for _, it := range items {
		doc, id, err := Build(it)
		if err != nil {
			return nil, err
		}
		data, err := snapshot.MarshalFile(doc)
		if err != nil {
			return nil, err
		}
		rel := snapshot.RelPath(it.Provider, id)
		if err := st.WriteAtomic(rel, data); err != nil {
			return nil, err
		}
		entries = append(entries, snapshot.ManifestEntry{ID: id, Provider: it.Provider, File: rel, Hash: doc["hash"].(string)})
	}
	if _, err := st.WriteManifest(entries, nil, BaseTime); err != nil {
		return nil, err
	}
	return entries, nil
}

// Many returns n distinct items alternating providers.
func Many(n int) []Item {
	items := make([]Item, n)
	for i := range items {
		if i%2 == 0 {
			items[i] = OpenAIChat(fmt.Sprintf("Summarize document %d: AI is transforming software development.", i))
		} else {
			items[i] = AnthropicMessage(fmt.Sprintf("Question %d: what is snapshot testing?", i))
		}
	}
	return items
}

func cloneMap(m map[string]any) map[string]any {
	c := make(map[string]any, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}
