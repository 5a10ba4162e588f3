package snapshot

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"strconv"
)

// Providers allowed in a snapshot set; each is a folder of the set.
var Providers = []string{"anthropic", "openai"}

// ValidProvider reports whether p is an allow-listed provider name.
func ValidProvider(p string) bool { return p == "openai" || p == "anthropic" }

var idPattern = regexp.MustCompile(`^[0-9a-f]{12}$`)

// ValidID reports whether id is 12 lowercase hex characters.
func ValidID(id string) bool { return len(id) == 12 && idPattern.MatchString(id) }

// Endpoint derives the API path of the key object from a stored request
// (DESIGN §11): openai + messages → chat completions, openai + prompt →
// completions, anthropic → messages.
func Endpoint(provider string, request map[string]any) string {
	if provider == "anthropic" {
		return "/v1/messages"
	}
	if _, ok := request["messages"]; !ok {
		if _, ok := request["prompt"]; ok {
			return "/v1/completions"
		}
	}
	return "/v1/chat/completions"
}

// RequestHeaderNames are the only request headers a record may store; they
// join the key (DESIGN §11 "Keys and lookups").
var RequestHeaderNames = []string{"anthropic-beta", "anthropic-version"}

// KeyObject builds {"provider", "endpoint", "request"[, "headers"]} with the
// key-only normalization applied to a copy of the request: stream and
// stream_options dropped, tool-call ids renumbered in order of first
// appearance, Anthropic string content/system turned into one text block.
func KeyObject(provider string, request map[string]any, headers map[string]any) map[string]any {
	r := keyRequest(provider, request)
	obj := map[string]any{
		"provider": provider,
		"endpoint": Endpoint(provider, request),
		"request":  r,
	}
	if len(headers) > 0 {
		obj["headers"] = headers
	}
	return obj
}

// RequestKey is the full 64-hex request key.
func RequestKey(provider string, request map[string]any, headers map[string]any) (string, error) {
	b, err := Canonical(KeyObject(provider, request, headers))
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// IDOf returns the 12-character id of a full request key.
func IDOf(key string) string { return key[:12] }

func keyRequest(provider string, request map[string]any) map[string]any {
	r := make(map[string]any, len(request))
	for k, v := range request {
		if k == "stream" || k == "stream_options" {
			continue
		}
		r[k] = v
	}
	if provider == "anthropic" {
		if s, ok := r["system"].(string); ok {
			r["system"] = textBlocks(s)
		}
	}
	msgs, ok := r["messages"].([]any)
	if !ok {
		return r
	}
	ids := map[string]string{}
	renumber := func(id any) any {
		s, ok := id.(string)
		if !ok {
			return id
		}
		if n, ok := ids[s]; ok {
			return n
		}
		n := "call_" + strconv.Itoa(len(ids)+1)
		ids[s] = n
		return n
	}
	out := make([]any, len(msgs))
	for i, m := range msgs {
		msg, ok := m.(map[string]any)
		if !ok {
			out[i] = m
			continue
		}
		c := make(map[string]any, len(msg))
		for k, v := range msg {
			c[k] = v
		}
		if provider == "anthropic" {
			switch content := c["content"].(type) {
			case string:
				c["content"] = textBlocks(content)
			case []any:
				blocks := make([]any, len(content))
				for j, b := range content {
					blk, ok := b.(map[string]any)
					if !ok {
						blocks[j] = b
						continue
					}
					nb := make(map[string]any, len(blk))
					for k, v := range blk {
						nb[k] = v
					}
					if nb["type"] == "tool_use" {
						if id, ok := nb["id"]; ok {
							nb["id"] = renumber(id)
						}
					}
					if nb["type"] == "tool_result" {
						if id, ok := nb["tool_use_id"]; ok {
							nb["tool_use_id"] = renumber(id)
						}
					}
					blocks[j] = nb
				}
				c["content"] = blocks
			}
		} else {
			if calls, ok := c["tool_calls"].([]any); ok {
				nc := make([]any, len(calls))
				for j, tc := range calls {
					call, ok := tc.(map[string]any)
					if !ok {
						nc[j] = tc
						continue
					}
					cc := make(map[string]any, len(call))
					for k, v := range call {
						cc[k] = v
					}
					if id, ok := cc["id"]; ok {
						cc["id"] = renumber(id)
					}
					nc[j] = cc
				}
				c["tool_calls"] = nc
			}
			if id, ok := c["tool_call_id"]; ok {
				c["tool_call_id"] = renumber(id)
			}
		}
		out[i] = c
	}
	r["messages"] = out
	return r
}

func textBlocks(s string) []any {
	return []any{map[string]any{"type": "text", "text": s}}
}

// optionalRequestFields are the optional fields of DESIGN §3 whose explicit
// null is stored as absent.
var optionalRequestFields = []string{
	"top_p", "frequency_penalty", "presence_penalty", "seed", "stop", "tools",
	"stop_sequences", "top_k", "system", "tool_choice", "metadata",
	"max_completion_tokens", "n", "best_of", "user", "response_format",
	"logit_bias", "logprobs", "top_logprobs", "parallel_tool_calls", "stream_options",
}

// NormalizeStored applies the stored normalization (DESIGN §11) in place:
// OpenAI "stop": "x" → ["x"]; explicit null on an optional field → absent.
// It is the complete list; nothing else is ever changed.
func NormalizeStored(provider string, request map[string]any) {
	for _, f := range optionalRequestFields {
		if v, ok := request[f]; ok && v == nil {
			delete(request, f)
		}
	}
	if provider == "openai" {
		if s, ok := request["stop"].(string); ok {
			request["stop"] = []any{s}
		}
	}
}

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

// Lineage computes a record's lineage from its request alone (DESIGN §11):
// when messages hold an assistant message, the parent is this request with
// messages cut just before the last assistant message, and turn is the
// number of assistant messages + 1. ok is false when there is no lineage.
func Lineage(provider string, request map[string]any, headers map[string]any) (parentID string, turn int, ok bool, err error) {
	msgs, _ := request["messages"].([]any)
	last, count := -1, 0
	for i, m := range msgs {
		if mm, ok := m.(map[string]any); ok && mm["role"] == "assistant" {
			last = i
			count++
		}
	}
	if last < 0 {
		return "", 0, false, nil
	}
	parent := make(map[string]any, len(request))
	for k, v := range request {
		parent[k] = v
	}
	parent["messages"] = append([]any(nil), msgs[:last]...)
	key, err := RequestKey(provider, parent, headers)
	if err != nil {
		return "", 0, false, fmt.Errorf("lineage: %w", err)
	}
	return IDOf(key), count + 1, true, nil
}
