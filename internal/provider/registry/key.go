package registry

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/snapshot"
	"github.com/traceforge/traceforge/internal/source"
)

// NormalizeStored applies the stored normalization of the format of a
// stored request (provider p, key endpoint e) in place (DESIGN §11); when no
// format owns the endpoint only explicit nulls on optional fields are
// dropped.
func NormalizeStored(p string, e provider.Endpoint, request map[string]any) {
	if f := Lookup(provider.Name(p), e); f != nil {
		f.NormalizeStored(request)
		return
	}
	provider.DropNullOptionals(request)
}

// KeyObject builds the key object {"provider", "endpoint", "request"[,
// "headers"]} of a stored request (DESIGN §4): the stored key endpoint and
// the key-only normalization of its format applied to a copy of the
// request, then the declared key normalizers of kc.Normalize (DESIGN
// §12.3, §12.9 item 3: after the built-in rules, never on headers). kc may
// be nil. A provider or endpoint no format owns is an error.
func KeyObject(p string, e provider.Endpoint, request map[string]any, headers map[string]any, kc *provider.KeyContext) (map[string]any, error) {
	obj, _, err := keyObject(p, e, request, headers, kc)
	return obj, err
}

func keyObject(p string, e provider.Endpoint, request map[string]any, headers map[string]any, kc *provider.KeyContext) (map[string]any, []string, error) {
	kr, applied, err := keyRequest(p, e, request, kc)
	if err != nil {
		return nil, nil, err
	}
	obj := map[string]any{
		"provider": p,
		"endpoint": string(e),
		"request":  kr,
	}
	if len(headers) > 0 {
		obj["headers"] = headers
	}
	return obj, applied, nil
}

// keyRequest is the "request" member of the key object (KeyObject) and
// the names of the declared key normalizers that changed it.
func keyRequest(p string, e provider.Endpoint, request map[string]any, kc *provider.KeyContext) (map[string]any, []string, error) {
	f, err := ForStored(p, e)
	if err != nil {
		return nil, nil, err
	}
	kr, applied := formatKeyRequest(f, request, kc)
	return kr, applied, nil
}

// formatKeyRequest is keyRequest for a known format.
func formatKeyRequest(f provider.Format, request map[string]any, kc *provider.KeyContext) (map[string]any, []string) {
	kr := f.KeyRequest(request, kc)
	var applied []string
	// An exchange is keyed by exactly what was sent (DESIGN §13.4): the
	// declared key normalizers are for LLM requests.
	if kc != nil && kc.Normalize != nil && !provider.IsExchange(f) {
		kr, applied = kc.Normalize.NormalizeKey(kr)
	}
	return kr, applied
}

// appendKeyObject appends the canonical (RFC 8785) bytes of the key
// object KeyObject builds, without building it: its members in their
// canonical order ("endpoint" < "headers" < "provider" < "request"), each
// value canonicalized as AppendCanonical does in the object.
func appendKeyObject(b []byte, p string, e provider.Endpoint, kr, headers map[string]any) ([]byte, error) {
	var err error
	b = append(b, `{"endpoint":`...)
	if b, err = snapshot.AppendCanonicalString(b, string(e)); err != nil {
		return nil, err
	}
	if len(headers) > 0 {
		b = append(b, `,"headers":`...)
		if b, err = snapshot.AppendCanonical(b, headers); err != nil {
			return nil, err
		}
	}
	b = append(b, `,"provider":`...)
	if b, err = snapshot.AppendCanonicalString(b, p); err != nil {
		return nil, err
	}
	b = append(b, `,"request":`...)
	if b, err = snapshot.AppendCanonical(b, kr); err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// RequestKey is the full 64-hex request key: SHA-256 of the JCS of the key
// object. kc may be nil.
func RequestKey(p string, e provider.Endpoint, request map[string]any, headers map[string]any, kc *provider.KeyContext) (string, error) {
	key, _, err := Key(p, e, request, headers, kc)
	return key, err
}

// Key is RequestKey plus the names of the declared key normalizers
// (kc.Normalize) that changed the key: a record's key_normalizers, nil when
// none did.
func Key(p string, e provider.Endpoint, request map[string]any, headers map[string]any, kc *provider.KeyContext) (string, []string, error) {
	f, err := ForStored(p, e)
	if err != nil {
		return "", nil, err
	}
	return keyOf(f, p, e, request, headers, kc)
}

// keyOf is Key for a request whose format f is known (no lookup).
func keyOf(f provider.Format, p string, e provider.Endpoint, request map[string]any, headers map[string]any, kc *provider.KeyContext) (string, []string, error) {
	kr, applied := formatKeyRequest(f, request, kc)
	bp := canonicalBufs.Get().(*[]byte)
	defer canonicalBufs.Put(bp)
	b, err := appendKeyObject((*bp)[:0], p, e, kr, headers)
	if err != nil {
		return "", nil, err
	}
	if cap(b) <= maxPooledCanonical {
		*bp = b
	}
	sum := sha256.Sum256(b)
	var key [2 * sha256.Size]byte // hex.EncodeToString would allocate twice
	hex.Encode(key[:], sum[:])
	return string(key[:]), applied, nil
}

// canonicalBufs holds the buffers key objects are canonicalized into: the
// bytes are only hashed, so every call (one per request served or recorded)
// reuses one instead of growing a new one from nothing.
var canonicalBufs = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

// maxPooledCanonical is the largest buffer kept in canonicalBufs: a rare
// huge request does not pin its buffer.
const maxPooledCanonical = 256 << 10

// Lineage computes a record's lineage from its request (DESIGN §11): the
// format's own rule when it has one (provider.Lineager: Responses chains and
// input items), else the chat rule — when messages hold an assistant
// message, the parent is this request with messages cut just before the
// last assistant message, and turn is the number of assistant messages + 1.
// ok is false when there is no lineage. kc may be nil.
func Lineage(p string, e provider.Endpoint, request map[string]any, headers map[string]any, kc *provider.KeyContext) (parentID string, turn int, ok bool, err error) {
	f, ferr := ForStored(p, e)
	if ferr != nil {
		f = nil
	}
	return lineage(f, p, e, request, headers, kc)
}

// LineageOf is Lineage for a parsed request (its format is known: no
// lookup).
func LineageOf(req *provider.Request, kc *provider.KeyContext) (parentID string, turn int, ok bool, err error) {
	return lineage(req.Format, string(req.Provider), req.Endpoint, req.Body, req.Headers, kc)
}

// lineage is Lineage with the format f of the request (nil: none owns it).
func lineage(f provider.Format, p string, e provider.Endpoint, request map[string]any, headers map[string]any, kc *provider.KeyContext) (parentID string, turn int, ok bool, err error) {
	parentOf := func(cut map[string]any) (string, error) {
		var key string
		var err error
		if f != nil {
			key, _, err = keyOf(f, p, e, cut, headers, kc)
		} else {
			key, err = RequestKey(p, e, cut, headers, kc)
		}
		if err != nil {
			return "", fmt.Errorf("lineage: %w", err)
		}
		return snapshot.IDOf(key), nil
	}
	if l, ok := f.(provider.Lineager); ok && f != nil {
		return l.Lineage(request, kc, parentOf)
	}
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
	parent := maps.Clone(request)
	parent["messages"] = append([]any(nil), msgs[:last]...)
	id, err := parentOf(parent)
	if err != nil {
		return "", 0, false, err
	}
	return id, count + 1, true, nil
}

// NewRecord assembles a complete record value (snapshot.NewRecord) with the
// id and lineage computed from the request. The request must already carry
// the stored normalization. kc may be nil; the names of the declared key
// normalizers that changed the key are stored as key_normalizers (omitted
// when none did). It returns the record and its full key.
func NewRecord(p string, e provider.Endpoint, at time.Time, src source.Source, request, headers map[string]any, resp snapshot.Response, kc *provider.KeyContext) (map[string]any, string, error) {
	key, applied, err := Key(p, e, request, headers, kc)
	if err != nil {
		return nil, "", err
	}
	var lin *snapshot.Lineage
	if parent, turn, ok, err := Lineage(p, e, request, headers, kc); err != nil {
		return nil, "", err
	} else if ok {
		lin = &snapshot.Lineage{ParentID: parent, Turn: turn}
	}
	rec, err := NewRecordKeyed(key, applied, lin, e, at, src, request, headers, resp)
	return rec, key, err
}

// NewRecordKeyed is NewRecord for a caller that already has the request's
// key and applied key normalizers (Key, or ParseWith's Request.Key and
// KeyNormalizers) and its lineage (Lineage; nil = none), computed with the
// same arguments: record computes each once per call.
func NewRecordKeyed(key string, applied []string, lin *snapshot.Lineage, e provider.Endpoint, at time.Time, src source.Source, request, headers map[string]any, resp snapshot.Response) (map[string]any, error) {
	rec, err := snapshot.NewRecord(key, string(e), lin, at, src, request, headers, resp)
	if err != nil {
		return nil, err
	}
	if len(applied) > 0 {
		names := make([]any, len(applied))
		for i, n := range applied {
			names[i] = n
		}
		rec["key_normalizers"] = names
		if err := snapshot.Rehash(rec); err != nil {
			return nil, err
		}
	}
	return rec, nil
}
