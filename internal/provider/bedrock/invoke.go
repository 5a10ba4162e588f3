package bedrock

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// The InvokeModel operations.
const (
	OpInvoke       = "invoke"
	OpInvokeStream = "invoke-with-response-stream"
)

// InvokeAnthropic is InvokeModel for Anthropic's models on Bedrock
// (anthropic.*, and inference profiles such as us.anthropic.*): POST
// /model/{modelId}/invoke and /invoke-with-response-stream, one key
// endpoint /model/{modelId}/invoke. The body is Anthropic's Messages body
// with "anthropic_version" (bedrock-2023-05-31) and without "model", which
// the path carries; the answer is Anthropic's message. The stream is AWS
// event-stream frames, each a "chunk" event whose payload's "bytes" hold
// one Anthropic stream event's JSON, base64-encoded: the Anthropic
// machinery of the base package (provider.AnthropicWire) assembles and
// synthesizes it, framed here. Errors are AWS's shape, as Bedrock answers.
type InvokeAnthropic struct {
	provider.AnthropicWire
	aws wire
}

var (
	_ provider.Format     = InvokeAnthropic{}
	_ provider.PathBinder = InvokeAnthropic{}
)

// NewInvokeAnthropic returns the InvokeModel format of Anthropic's models.
func NewInvokeAnthropic() InvokeAnthropic { return InvokeAnthropic{} }

// invokePattern is the pattern of InvokeAnthropic's key endpoints.
const invokePattern = "/model/anthropic.{model}/invoke"

// Provider is Bedrock.
func (InvokeAnthropic) Provider() provider.Name { return Name }

// Endpoint is the pattern of the key endpoints.
func (InvokeAnthropic) Endpoint() provider.Endpoint { return invokePattern }

// Route owns POST …/model/{modelId}/invoke and /invoke-with-response-stream
// for an Anthropic model id, keyed as /model/{modelId}/invoke.
func (InvokeAnthropic) Route(method, path string) (provider.Endpoint, bool) {
	p, ok := ParsePath(path)
	if !ok || !IsAnthropicModel(p.Model) {
		return "", false
	}
	return route(method, path, OpInvoke, OpInvoke, OpInvokeStream)
}

// IsAnthropicModel reports whether a Bedrock model id names one of
// Anthropic's models (anthropic.…, a region-prefixed inference profile
// us.anthropic.…, or an ARN ending in one).
func IsAnthropicModel(model string) bool {
	if i := strings.LastIndexByte(model, '/'); i >= 0 {
		model = model[i+1:]
	}
	return strings.HasPrefix(model, "anthropic.") || strings.Contains(model, ".anthropic.")
}

// OwnsRecord is false: Bedrock did not exist in format 1.0.0.
func (InvokeAnthropic) OwnsRecord(map[string]any) bool { return false }

// Streams iff the operation is invoke-with-response-stream.
func (InvokeAnthropic) Streams(path string, _ map[string]any) bool {
	p, ok := ParsePath(path)
	return ok && p.Op == OpInvokeStream
}

// BindPath puts the model id into the stored request as "model".
func (f InvokeAnthropic) BindPath(path string, request map[string]any) error {
	return f.aws.BindPath(path, request)
}

// NormalizeStored is Anthropic's: explicit nulls on optional fields are
// dropped.
func (f InvokeAnthropic) NormalizeStored(request map[string]any) {
	f.AnthropicWire.NormalizeStored(request)
}

// LiveBody is the request without the "model" the path carries and
// without stream fields.
func (f InvokeAnthropic) LiveBody(request map[string]any) map[string]any {
	return f.aws.LiveBody(f.AnthropicWire.LiveBody(request))
}

// StreamContentType is AWS's event stream.
func (InvokeAnthropic) StreamContentType() string { return EventStreamContentType }

// NewAssembler returns the assembler of one InvokeModelWithResponseStream
// answer: each chunk's bytes, decoded, go to Anthropic's assembler as the
// SSE event they are.
func (f InvokeAnthropic) NewAssembler() provider.Assembler {
	return &chunkAssembler{inner: f.AnthropicWire.NewAssembler()}
}

// SynthesizeStream writes the chunk frames of Anthropic's synthesized
// stream of body (ping events left out: Bedrock sends none).
func (f InvokeAnthropic) SynthesizeStream(body map[string]any, includeUsage bool, w io.Writer, flush func()) error {
	return f.AnthropicWire.SynthesizeStream(body, includeUsage, &chunkWriter{w: w}, flush)
}

// SynthesizeBody is nil: there are no body-less Bedrock snapshots.
func (InvokeAnthropic) SynthesizeBody(string, time.Time, string, snapshot.Fields) map[string]any {
	return nil
}

// ErrorBody is AWS's error shape.
func (f InvokeAnthropic) ErrorBody(typ, code, message string) []byte {
	return f.aws.ErrorBody(typ, code, message)
}

// ErrorType is Bedrock's error type for a status.
func (f InvokeAnthropic) ErrorType(status int) string { return f.aws.ErrorType(status) }

// MissError is ResourceNotFoundException.
func (f InvokeAnthropic) MissError() (typ, code string) { return f.aws.MissError() }

// RecordSchema is the InvokeModel (Anthropic) record definition.
func (InvokeAnthropic) RecordSchema() string { return "#/$defs/bedrockInvokeAnthropicRecord" }

// chunkAssembler feeds the Anthropic events carried by chunk frames to an
// Anthropic assembler.
type chunkAssembler struct {
	frameFeed
	inner provider.Assembler
}

func (a *chunkAssembler) Write(p []byte) (int, error) { return a.feed(p, a.frame) }

func (a *chunkAssembler) frame(f Frame) error {
	n := a.fr.Frames()
	if f.MessageType == "exception" || f.MessageType == "error" {
		a.streamErr = fmt.Errorf("%w: %w: frame %d: %s %s %s", provider.ErrBrokenStream, provider.ErrStreamError, n, f.MessageType, f.Type, f.ErrMessage)
		return nil
	}
	if f.MessageType != "event" || f.Type != "chunk" {
		return fmt.Errorf("%w: frame %d: %s %q is not a chunk event", provider.ErrMalformed, n, f.MessageType, f.Type)
	}
	v, err := provider.DecodeEvent(f.Payload)
	if err != nil {
		return fmt.Errorf("frame %d: %w", n, err)
	}
	m, _ := v.(map[string]any)
	b64, ok := m["bytes"].(string)
	if !ok {
		return fmt.Errorf("%w: frame %d: chunk without bytes", provider.ErrMalformed, n)
	}
	data, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return fmt.Errorf("%w: frame %d: bytes: %v", provider.ErrMalformed, n, err)
	}
	ev, err := provider.Decode(data)
	if err != nil {
		return fmt.Errorf("frame %d: %w", n, err)
	}
	typ, _ := ev["type"].(string)
	if typ == "" || strings.ContainsAny(typ, "\r\n") {
		return fmt.Errorf("%w: frame %d: chunk event without a type", provider.ErrMalformed, n)
	}
	var sse bytes.Buffer
	sse.WriteString("event: " + typ + "\ndata: ")
	sse.Write(bytes.ReplaceAll(bytes.TrimSpace(data), []byte("\n"), []byte(" ")))
	sse.WriteString("\n\n")
	_, err = a.inner.Write(sse.Bytes())
	return err
}

func (a *chunkAssembler) Done() (map[string]any, error) {
	if a.err != nil {
		return nil, a.err
	}
	if a.streamErr != nil {
		return nil, a.streamErr
	}
	if a.fr.Pending() > 0 {
		return nil, fmt.Errorf("%w: %d bytes of an incomplete frame after %d frames", provider.ErrBrokenStream, a.fr.Pending(), a.fr.Frames())
	}
	return a.inner.Done()
}

// chunkWriter turns each SSE event written to it into a chunk frame.
type chunkWriter struct{ w io.Writer }

func (c *chunkWriter) Write(p []byte) (int, error) {
	var data []string
	sc := bufio.NewScanner(bytes.NewReader(p))
	sc.Buffer(make([]byte, 0, 64<<10), len(p)+1)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
			data = append(data, strings.TrimPrefix(d, " "))
		}
	}
	if len(data) == 0 {
		return len(p), nil
	}
	payload := strings.Join(data, "\n")
	if strings.Contains(payload, `"type":"ping"`) {
		return len(p), nil
	}
	f, err := EncodeEvent("chunk", provider.Ordered("bytes", base64.StdEncoding.EncodeToString([]byte(payload))))
	if err != nil {
		return 0, err
	}
	if _, err := c.w.Write(f); err != nil {
		return 0, err
	}
	return len(p), nil
}
