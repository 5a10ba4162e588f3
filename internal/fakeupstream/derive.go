package fakeupstream

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"math"
	"math/rand/v2"
	"strconv"
)

// seed is the digest every derived id of a call comes from: the path and
// body of the request, plus the call counter under Options.MintIDs.
func (c *call) seed() [32]byte {
	h := sha256.New()
	h.Write([]byte(c.r.URL.Path))
	h.Write([]byte{0})
	h.Write(c.body)
	if c.opts.MintIDs {
		h.Write([]byte{0})
		h.Write([]byte(strconv.FormatInt(c.n, 10)))
	}
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// stamp is the creation time of a Responses, Gemini or Ollama answer: fixed
// (the same request gets the same answer), or per call under MintIDs.
func (c *call) stamp() int64 {
	if c.opts.MintIDs {
		return c.created()
	}
	return createdBase
}

// derived returns n bytes derived from the call's seed, a kind and an index.
func (c *call) derived(kind string, i, n int) []byte {
	seed := c.seed()
	var out []byte
	for block := 0; len(out) < n; block++ {
		h := sha256.New()
		h.Write(seed[:])
		h.Write([]byte(kind))
		h.Write([]byte{0, byte(i), byte(i >> 8), byte(block)})
		out = h.Sum(out)
	}
	return out[:n]
}

// hexID is prefix + 48 hex digits (the shape of resp_…, msg_…, fc_…, rs_…).
func (c *call) hexID(prefix, kind string, i int) string {
	return prefix + hex.EncodeToString(c.derived(kind, i, 24))
}

// googleID is a 22-character base64url id (the shape of Gemini responseId).
func (c *call) googleID(kind string) string {
	return base64.RawURLEncoding.EncodeToString(c.derived(kind, 0, 16))[:22]
}

// embedding returns a deterministic unit vector of dims float32 values for
// text under model; a shorter vector is the prefix of a longer one,
// renormalized (like text-embedding-3's dimensions parameter).
func (c *call) embedding(model, text string, dims int) []float32 {
	key := model + "\x00" + c.opts.ContentPrefix + text
	if c.opts.Nondeterministic {
		key += "\x00" + strconv.FormatInt(c.n, 10)
	}
	d := sha256.Sum256([]byte(key))
	rng := rand.New(rand.NewPCG(binary.LittleEndian.Uint64(d[0:8]), binary.LittleEndian.Uint64(d[8:16])))
	v := make([]float32, dims)
	var sum float64
	for i := range v {
		x := rng.Float64()*2 - 1
		v[i] = float32(x)
		sum += float64(v[i]) * float64(v[i])
	}
	norm := math.Sqrt(sum)
	if norm == 0 {
		return v
	}
	for i := range v {
		v[i] = float32(float64(v[i]) / norm)
	}
	return v
}

// float32Base64 encodes v the way OpenAI's encoding_format "base64" does:
// little-endian float32 values, standard base64.
func float32Base64(v []float32) string {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return base64.StdEncoding.EncodeToString(b)
}
