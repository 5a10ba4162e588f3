package ollama

import (
	"fmt"
	"io"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// Chat is POST /api/chat. Build it with NewChat.
type Chat struct{ wire }

// Generate is POST /api/generate. Build it with NewGenerate.
type Generate struct{ wire }

// Embed is POST /api/embed. Build it with NewEmbed.
type Embed struct{ wire }

var (
	_ provider.Format = Chat{}
	_ provider.Format = Generate{}
	_ provider.Format = Embed{}
)

var (
	chatShape     = shape{message: "message", text: "content"}
	generateShape = shape{text: "response"}
)

// NewChat returns the /api/chat format.
func NewChat() Chat { return Chat{wire{ChatEndpoint}} }

// NewGenerate returns the /api/generate format.
func NewGenerate() Generate { return Generate{wire{GenerateEndpoint}} }

// NewEmbed returns the /api/embed format.
func NewEmbed() Embed { return Embed{wire{EmbedEndpoint}} }

// OwnsRecord: a stored Ollama request with "messages" is a chat request.
func (Chat) OwnsRecord(request map[string]any) bool {
	_, ok := request["messages"]
	return ok
}

// Fields of a final chat body (for a stream: the Assembler's result),
// DESIGN §12.2 and §12.9 item 2: content = message.content, tool_calls =
// message.tool_calls verbatim (nil when none), finish_reason = done_reason,
// tokens_used = prompt_eval_count + eval_count (a missing counter counts 0),
// model; no usage is stored.
func (Chat) Fields(body map[string]any) (snapshot.Fields, error) {
	f, err := common(body)
	if err != nil {
		return snapshot.Fields{}, err
	}
	msg, ok := body["message"].(map[string]any)
	if !ok {
		return snapshot.Fields{}, fmt.Errorf("%w: /message is %s, not an object", provider.ErrMalformed, provider.TypeName(body["message"]))
	}
	if f.Content, err = optString(msg, "content", "/message"); err != nil {
		return snapshot.Fields{}, err
	}
	switch t := msg["tool_calls"].(type) {
	case []any:
		if len(t) > 0 {
			f.ToolCalls = provider.DeepCopy(t).([]any)
		}
	case nil:
	default:
		return snapshot.Fields{}, fmt.Errorf("%w: /message/tool_calls is %s, not an array", provider.ErrMalformed, provider.TypeName(t))
	}
	return f, nil
}

// NewAssembler returns the assembler of one /api/chat NDJSON stream.
func (Chat) NewAssembler() provider.Assembler { return newAssembler(chatShape) }

// SynthesizeStream writes an /api/chat NDJSON stream carrying body, one
// Write (and flush) per line, deterministic: lines of thinking pieces, of
// content pieces, one line with the tool calls, then the done line
// (shape.lines). includeUsage is ignored: the counters are always there.
func (Chat) SynthesizeStream(body map[string]any, _ bool, w io.Writer, flush func()) error {
	lines, err := chatShape.lines(body)
	if err != nil {
		return err
	}
	return provider.WriteEvents(lines, w, flush)
}

// RecordSchema is the chat record definition.
func (Chat) RecordSchema() string { return "#/$defs/ollamaChatRecord" }

// OwnsRecord: a stored Ollama request with "prompt" is a generate request.
func (Generate) OwnsRecord(request map[string]any) bool {
	_, ok := request["prompt"]
	return ok
}

// Fields of a final generate body: content = response, finish_reason =
// done_reason, tokens_used = prompt_eval_count + eval_count, model; no tool
// calls, no usage.
func (Generate) Fields(body map[string]any) (snapshot.Fields, error) {
	f, err := common(body)
	if err != nil {
		return snapshot.Fields{}, err
	}
	if f.Content, err = optString(body, "response", ""); err != nil {
		return snapshot.Fields{}, err
	}
	return f, nil
}

// NewAssembler returns the assembler of one /api/generate NDJSON stream.
func (Generate) NewAssembler() provider.Assembler { return newAssembler(generateShape) }

// SynthesizeStream writes an /api/generate NDJSON stream carrying body
// (see Chat.SynthesizeStream).
func (Generate) SynthesizeStream(body map[string]any, _ bool, w io.Writer, flush func()) error {
	lines, err := generateShape.lines(body)
	if err != nil {
		return err
	}
	return provider.WriteEvents(lines, w, flush)
}

// RecordSchema is the generate record definition.
func (Generate) RecordSchema() string { return "#/$defs/ollamaGenerateRecord" }

// OwnsRecord: a stored Ollama request with "input" is an embed request.
func (Embed) OwnsRecord(request map[string]any) bool {
	_, ok := request["input"]
	return ok
}

// Streams is false: /api/embed answers with one JSON object.
func (Embed) Streams(string, map[string]any) bool { return false }

// KeyRequest is a copy of the stored request (embed has no stream flag and
// no tool calls).
func (Embed) KeyRequest(request map[string]any, _ *provider.KeyContext) map[string]any {
	return provider.WithoutStream(request)
}

// LiveBody is the stored request as it is.
func (Embed) LiveBody(request map[string]any) map[string]any {
	return provider.WithoutStream(request)
}

// Fields checks an /api/embed answer ({"model","embeddings":[[…],…],
// "prompt_eval_count",…}): tokens_used = prompt_eval_count (absent counts
// 0), model; no content, finish reason or usage (DESIGN §12.9 item 2).
func (Embed) Fields(body map[string]any) (snapshot.Fields, error) {
	f, err := provider.ResponseModel(body)
	if err != nil {
		return snapshot.Fields{}, err
	}
	list, ok := body["embeddings"].([]any)
	if !ok {
		return snapshot.Fields{}, fmt.Errorf("%w: /embeddings is %s, not an array", provider.ErrMalformed, provider.TypeName(body["embeddings"]))
	}
	for i, e := range list {
		if _, ok := e.([]any); !ok {
			return snapshot.Fields{}, fmt.Errorf("%w: /embeddings/%d is %s, not an array", provider.ErrMalformed, i, provider.TypeName(e))
		}
	}
	if f.TokensUsed, err = counters(body, "prompt_eval_count"); err != nil {
		return snapshot.Fields{}, err
	}
	f.NoText = true
	return f, nil
}

// errNoStream: /api/embed has no stream to assemble or synthesize.
var errNoStream = fmt.Errorf("%w: Ollama embeddings do not stream", provider.ErrMalformed)

// NewAssembler returns an assembler that refuses any stream.
func (Embed) NewAssembler() provider.Assembler { return provider.NoStream(errNoStream) }

// SynthesizeStream refuses: embeddings do not stream.
func (Embed) SynthesizeStream(map[string]any, bool, io.Writer, func()) error { return errNoStream }

// RecordSchema is the embed record definition.
func (Embed) RecordSchema() string { return "#/$defs/ollamaEmbedRecord" }

// Determinism: embeddings have no temperature or seed.
func (Embed) Determinism() (temperature, seed string) { return "", "" }
