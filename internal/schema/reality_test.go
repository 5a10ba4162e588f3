package schema

import (
	"strings"
	"testing"
)

// TestProviderRealityAccepted (DESIGN §13.3): the schema checks the spec's
// required fields and types; the shapes the providers accept are not
// refused — any message role (Anthropic's mid-conversation "system"),
// content as an array of parts, null-valued optional members of messages
// and of the request, Gemini tools as one object, extra members anywhere.
func TestProviderRealityAccepted(t *testing.T) {
	const geminiDoc = `{"version":"1.1.0","hash":"sha256:0000000000000000000000000000000000000000000000000000000000000000","snapshots":[{
 "id":"abc123def456","timestamp":"2026-01-09T10:30:00Z",
 "source":{"file":"src/a.py","line":12,"function":"f"},
 "endpoint":"/v1beta/models/gemini-2.5-flash:generateContent",
 "request":{"model":"gemini-2.5-flash","contents":[{"role":"user","parts":[{"text":"Hi"}]}],"generationConfig":{"temperature":0,"maxOutputTokens":64}},
 "response":{"content":"Hi","tokens_used":10,"latency_ms":450,"finish_reason":"STOP"},
 "hash":"sha256:0000000000000000000000000000000000000000000000000000000000000000"}]}`
	const responsesDoc = `{"version":"1.1.0","hash":"sha256:0000000000000000000000000000000000000000000000000000000000000000","snapshots":[{
 "id":"abc123def456","timestamp":"2026-01-09T10:30:00Z",
 "source":{"file":"src/a.py","line":12,"function":"f"},
 "endpoint":"/v1/responses",
 "request":{"model":"gpt-4.1","input":"Hi","temperature":0,"max_output_tokens":64},
 "response":{"content":"Hi","tokens_used":10,"latency_ms":450,"finish_reason":"completed"},
 "hash":"sha256:0000000000000000000000000000000000000000000000000000000000000000"}]}`
	cases := []struct {
		name, doc, def, from, to string
	}{
		{"anthropic mid-conversation system message", strings.Replace(validOpenAI, "/v1/chat/completions", "/v1/messages", 1), "#/$defs/messagesRecord",
			`"messages":[{"role":"user","content":"Hello"}]`,
			`"messages":[{"role":"user","content":"Hello"},{"role":"assistant","content":"Hi"},{"role":"system","content":"Answer in French from now on."},{"role":"user","content":[{"type":"text","text":"Again"}]}]`},
		{"openai-compatible role of another server", validOpenAI, "#/$defs/chatRecord", `"role":"user"`, `"role":"ipython"`},
		{"mistral content parts", validOpenAI, "#/$defs/chatRecord",
			`"content":"Hello"`, `"content":[{"type":"text","text":"Hello"}]`},
		{"null-valued optional message members", validOpenAI, "#/$defs/chatRecord",
			`{"role":"user","content":"Hello"}`,
			`{"role":"user","content":"Hello","name":null,"tool_calls":null,"tool_call_id":null},{"role":"assistant","content":null,"name":null,"tool_calls":null,"function_call":null,"refusal":null},{"role":"user","content":"Go on"}`},
		{"null-valued optional request members", validOpenAI, "#/$defs/chatRecord",
			`"seed":42`, `"seed":42,"stream_options":null,"tool_choice":null,"parallel_tool_calls":null,"user":null,"response_format":null,"logprobs":null,"top_logprobs":null`},
		{"extra members anywhere in the request", validOpenAI, "#/$defs/chatRecord",
			`"seed":42`, `"seed":42,"safe_prompt":false,"extra_body":{"x":[1,{"y":null}]},"messages_meta":null`},
		{"gemini tools as one object", geminiDoc, "#/$defs/geminiGenerateRecord",
			`"generationConfig"`, `"tools":{"functionDeclarations":[{"name":"f","parameters":{"type":"OBJECT"}}]},"generationConfig"`},
		{"gemini tools as an array", geminiDoc, "#/$defs/geminiGenerateRecord",
			`"generationConfig"`, `"tools":[{"functionDeclarations":[{"name":"f"}]}],"generationConfig"`},
		{"responses null-valued optional members", responsesDoc, "#/$defs/responsesRecord",
			`"input":"Hi"`, `"input":"Hi","instructions":null,"previous_response_id":null,"store":null,"reasoning":null,"text":null,"include":null,"metadata":null,"truncation":null,"user":null,"tool_choice":null,"parallel_tool_calls":null,"stream_options":null`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(tc.doc, tc.from) {
				t.Fatalf("%q not in the document", tc.from)
			}
			doc := strings.Replace(tc.doc, tc.from, tc.to, 1)
			if v := ValidateFile(decode(t, doc), tc.def); len(v) != 0 {
				t.Fatalf("refused: %v", v)
			}
		})
	}
}

// TestSpecFieldsStayStrict: the relaxations of §13.3 leave the spec's
// required fields and types as strict as before.
func TestSpecFieldsStayStrict(t *testing.T) {
	cases := []struct{ name, def, from, to, want string }{
		{"temperature null", "#/$defs/chatRecord", `"temperature":0.0`, `"temperature":null`, "/snapshots/0/request/temperature: must be a number, not null"},
		{"max_tokens string", "#/$defs/chatRecord", `"max_tokens":100`, `"max_tokens":"100"`, "/snapshots/0/request/max_tokens: must be an integer, not a string"},
		{"seed null", "#/$defs/chatRecord", `"seed":42`, `"seed":null`, "/snapshots/0/request/seed: must be an integer, not null"},
		{"messages null", "#/$defs/chatRecord", `"messages":[{"role":"user","content":"Hello"}]`, `"messages":null`, "/snapshots/0/request/messages: must be an array, not null"},
		{"empty role", "#/$defs/chatRecord", `"role":"user"`, `"role":""`, "/snapshots/0/request/messages/0/role: must not be empty"},
		{"anthropic message without content", "#/$defs/messagesRecord", `{"role":"user","content":"Hello"}`, `{"role":"system"}`, `/snapshots/0/request/messages/0/content: required field "content" is missing`},
		{"response content an array", "#/$defs/chatRecord", `"content":"Hi"`, `"content":[{"type":"text","text":"Hi"}]`, "/snapshots/0/response/content: must be a string, not an array"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			doc := strings.Replace(validOpenAI, tc.from, tc.to, 1)
			if doc == validOpenAI {
				t.Fatalf("%q not in the document", tc.from)
			}
			var lines []string
			for _, v := range ValidateFile(decode(t, doc), tc.def) {
				lines = append(lines, v.String())
			}
			if joined := strings.Join(lines, "\n"); !strings.Contains(joined, tc.want) {
				t.Fatalf("want %q in\n%s", tc.want, joined)
			}
		})
	}
}
