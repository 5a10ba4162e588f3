package fakeupstream

import (
	"encoding/json"
	"strings"
	"testing"
)

const geminiBody = `{"contents":[{"role":"user","parts":[{"text":"Tell me a story please"}]}],"systemInstruction":{"parts":[{"text":"Be brief."}]},"generationConfig":{"temperature":0,"seed":42}}`

const geminiTools = `"tools":[{"functionDeclarations":[{"name":"get_weather","description":"d","parameters":{"type":"OBJECT","properties":{"city":{"type":"STRING"},"days":{"type":"INTEGER"}},"required":["city"]}}]}]`

// geminiChunks returns the chunks of a streamed answer (SSE with alt=sse).
func geminiChunks(t *testing.T, body []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, ev := range parseCRLFSSE(t, body) {
		if ev.name != "" {
			t.Fatalf("Gemini event with a name %q", ev.name)
		}
		out = append(out, obj(t, []byte(ev.data)))
	}
	return out
}

// geminiStreamText joins the non-thought text parts of every chunk.
func geminiStreamText(t *testing.T, chunks []map[string]any) string {
	t.Helper()
	var b strings.Builder
	for _, c := range chunks {
		for _, p := range get(t, c, "candidates", 0, "content", "parts").([]any) {
			if s, ok := p.(map[string]any)["text"].(string); ok && p.(map[string]any)["thought"] != true {
				b.WriteString(s)
			}
		}
	}
	return b.String()
}

func TestGeminiGenerate(t *testing.T) {
	s := start(t, Options{})
	for _, version := range []string{"v1", "v1beta", "v1alpha"} {
		resp, b := do(t, s.URL+"/"+version+"/models/gemini-2.5-flash:generateContent", geminiBody, geminiAuth)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("%s: %d %s", version, resp.StatusCode, b)
		}
		m := obj(t, b)
		cand := get(t, m, "candidates", 0)
		if get(t, cand, "content", "role") != "model" || get(t, cand, "content", "parts", 0, "text") != "Echo: Tell me a story please" ||
			get(t, cand, "finishReason") != "STOP" || get(t, cand, "index") != 0.0 {
			t.Fatalf("candidate %v", cand)
		}
		u := get(t, m, "usageMetadata")
		if get(t, u, "promptTokenCount") != 7.0 || get(t, u, "candidatesTokenCount") != 6.0 || get(t, u, "totalTokenCount") != 13.0 || has(u, "thoughtsTokenCount") {
			t.Fatalf("usage %v", u)
		}
		if get(t, m, "modelVersion") != "gemini-2.5-flash" || len(get(t, m, "responseId").(string)) != 22 {
			t.Fatalf("%v", m)
		}
	}
	// The key as a query parameter works too; the same request gets the same answer.
	_, b1 := do(t, s.URL+"/v1beta/models/gemini-2.5-flash:generateContent?key=AIza-q", geminiBody, nil)
	_, b2 := do(t, s.URL+"/v1beta/models/gemini-2.5-flash:generateContent?key=AIza-q", geminiBody, nil)
	if string(b1) != string(b2) || get(t, obj(t, b1), "candidates", 0, "finishReason") != "STOP" {
		t.Fatalf("%s\n%s", b1, b2)
	}
	s.SetOptions(Options{MintIDs: true})
	_, b3 := do(t, s.URL+"/v1beta/models/gemini-2.5-flash:generateContent?key=AIza-q", geminiBody, nil)
	if get(t, obj(t, b1), "responseId") == get(t, obj(t, b3), "responseId") {
		t.Fatal("MintIDs: same responseId")
	}
}

func TestGeminiStreamMatchesPlain(t *testing.T) {
	s := start(t, Options{})
	_, plain := do(t, s.URL+"/v1beta/models/gemini-2.5-flash:generateContent", geminiBody, geminiAuth)
	resp, b := do(t, s.URL+"/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", geminiBody, geminiAuth)
	if resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("content-type %q", resp.Header.Get("Content-Type"))
	}
	chunks := geminiChunks(t, b)
	if len(chunks) != len(textPieces("Echo: Tell me a story please")) {
		t.Fatalf("%d chunks", len(chunks))
	}
	// Google's compact JSON: a space after each key's colon, keys in the API's order.
	if first := parseCRLFSSE(t, b)[0].data; !strings.HasPrefix(first, `{"candidates": [{"content": {"parts": [{"text": "Echo:"}],"role": "model"},"index": 0}],"usageMetadata": {"promptTokenCount": 7,`) {
		t.Fatalf("first chunk %s", first)
	}
	p := obj(t, plain)
	if got := geminiStreamText(t, chunks); got != get(t, p, "candidates", 0, "content", "parts", 0, "text") {
		t.Fatalf("streamed %q", got)
	}
	prev := 0.0
	for i, c := range chunks {
		last := i == len(chunks)-1
		if has(get(t, c, "candidates", 0), "finishReason") != last {
			t.Fatalf("chunk %d: %v", i, c)
		}
		// Running totals, like the API's.
		if n := get(t, c, "usageMetadata", "candidatesTokenCount").(float64); n <= prev {
			t.Fatalf("chunk %d: candidatesTokenCount %v after %v", i, n, prev)
		} else {
			prev = n
		}
		if get(t, c, "responseId") != get(t, chunks[0], "responseId") || get(t, c, "modelVersion") != "gemini-2.5-flash" {
			t.Fatalf("chunk %d ids", i)
		}
	}
	if !jsonEqual(t, get(t, chunks[len(chunks)-1], "usageMetadata"), p["usageMetadata"]) {
		t.Fatal("last chunk usage differs from the plain answer's")
	}

	// Without alt=sse: a JSON array of the same chunks.
	resp, b = do(t, s.URL+"/v1beta/models/gemini-2.5-flash:streamGenerateContent", geminiBody, geminiAuth)
	var arr []map[string]any
	if err := json.Unmarshal(b, &arr); err != nil || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("array stream: %v %s", err, b)
	}
	if geminiStreamText(t, arr) != "Echo: Tell me a story please" || len(arr) != len(chunks) {
		t.Fatalf("array stream %s", b)
	}
}

func TestGeminiFunctionCalling(t *testing.T) {
	s := start(t, Options{})
	req := `{"contents":[{"role":"user","parts":[{"text":"What is the weather in Paris?"}]}],` + geminiTools + `}`
	_, b := do(t, s.URL+"/v1beta/models/gemini-2.5-flash:generateContent", req, geminiAuth)
	fc := get(t, obj(t, b), "candidates", 0, "content", "parts", 0, "functionCall")
	if get(t, fc, "name") != "get_weather" || get(t, fc, "args", "city") != "Paris" || get(t, fc, "args", "days") != 1.0 {
		t.Fatalf("%s", b)
	}
	_, sb := do(t, s.URL+"/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", req, geminiAuth)
	chunks := geminiChunks(t, sb)
	if len(chunks) != 1 || !jsonEqual(t, get(t, chunks[0], "candidates", 0, "content", "parts", 0, "functionCall"), fc) {
		t.Fatalf("streamed call %s", sb)
	}
	// mode NONE answers text.
	none := strings.Replace(req, `"tools"`, `"toolConfig":{"functionCallingConfig":{"mode":"NONE"}},"tools"`, 1)
	_, b = do(t, s.URL+"/v1beta/models/gemini-2.5-flash:generateContent", none, geminiAuth)
	if get(t, obj(t, b), "candidates", 0, "content", "parts", 0, "text") != "Echo: What is the weather in Paris?" {
		t.Fatalf("mode NONE: %s", b)
	}
	// The function response answers text.
	follow := `{"contents":[{"role":"user","parts":[{"text":"What is the weather in Paris?"}]},` +
		`{"role":"model","parts":[{"functionCall":{"name":"get_weather","args":{"city":"Paris"}}}]},` +
		`{"role":"user","parts":[{"functionResponse":{"name":"get_weather","response":{"temp":"18C"}}}]}],` + geminiTools + `}`
	_, b = do(t, s.URL+"/v1beta/models/gemini-2.5-flash:generateContent", follow, geminiAuth)
	if got := get(t, obj(t, b), "candidates", 0, "content", "parts", 0, "text"); got != `The tool returned: {"temp":"18C"}` {
		t.Fatalf("after the tool: %v", got)
	}
}

// The schema may come as parametersJsonSchema or under its proto field name,
// parameters_json_schema (what google-genai for Python sends): proto JSON
// parsers accept both names.
func TestGeminiFunctionCallingJSONSchema(t *testing.T) {
	s := start(t, Options{})
	for _, field := range []string{"parametersJsonSchema", "parameters_json_schema"} {
		req := `{"contents":[{"role":"user","parts":[{"text":"What is the weather in Paris?"}]}],` +
			`"tools":[{"functionDeclarations":[{"name":"get_weather","description":"d","` + field +
			`":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}]}]}`
		_, b := do(t, s.URL+"/v1beta/models/gemini-2.5-flash:generateContent", req, geminiAuth)
		fc := get(t, obj(t, b), "candidates", 0, "content", "parts", 0, "functionCall")
		if get(t, fc, "name") != "get_weather" || get(t, fc, "args", "city") != "Paris" {
			t.Fatalf("%s: %s", field, b)
		}
	}
}

func TestGeminiThinking(t *testing.T) {
	s := start(t, Options{})
	req := `{"contents":[{"role":"user","parts":[{"text":"Weather in Paris?"}]}],` + geminiTools +
		`,"generationConfig":{"thinkingConfig":{"includeThoughts":true,"thinkingBudget":1024}}}`
	_, b := do(t, s.URL+"/v1beta/models/gemini-2.5-pro:generateContent", req, geminiAuth)
	m := obj(t, b)
	parts := get(t, m, "candidates", 0, "content", "parts")
	if get(t, parts, 0, "thought") != true || get(t, parts, 0, "text") != "Thinking about: Weather in Paris?" {
		t.Fatalf("thought part %v", parts)
	}
	if get(t, parts, 1, "functionCall", "name") != "get_weather" || get(t, parts, 1, "thoughtSignature") == "" {
		t.Fatalf("call part %v", parts)
	}
	u := get(t, m, "usageMetadata")
	if get(t, u, "thoughtsTokenCount") != 5.0 ||
		get(t, u, "totalTokenCount") != get(t, u, "promptTokenCount").(float64)+get(t, u, "candidatesTokenCount").(float64)+5 {
		t.Fatalf("usage %v", u)
	}
	// Streamed: the thought comes first, in its own chunk.
	_, sb := do(t, s.URL+"/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse", req, geminiAuth)
	chunks := geminiChunks(t, sb)
	if get(t, chunks[0], "candidates", 0, "content", "parts", 0, "thought") != true {
		t.Fatalf("%s", sb)
	}
	// thinkingBudget 0 does not think.
	_, b = do(t, s.URL+"/v1beta/models/gemini-2.5-flash:generateContent",
		`{"contents":[{"parts":[{"text":"hi"}]}],"generationConfig":{"thinkingConfig":{"includeThoughts":true,"thinkingBudget":0}}}`, geminiAuth)
	if has(get(t, obj(t, b), "usageMetadata"), "thoughtsTokenCount") {
		t.Fatalf("%s", b)
	}
}

func TestGeminiMaxTokens(t *testing.T) {
	s := start(t, Options{})
	_, b := do(t, s.URL+"/v1/models/gemini-2.0-flash:generateContent",
		`{"contents":[{"parts":[{"text":"one two three four"}]}],"generationConfig":{"maxOutputTokens":2}}`, geminiAuth)
	c := get(t, obj(t, b), "candidates", 0)
	if get(t, c, "finishReason") != "MAX_TOKENS" || get(t, c, "content", "parts", 0, "text") != "Echo: one" {
		t.Fatalf("%s", b)
	}
}

func TestGeminiEmbed(t *testing.T) {
	s := start(t, Options{})
	_, b := do(t, s.URL+"/v1beta/models/gemini-embedding-001:embedContent",
		`{"content":{"parts":[{"text":"hello world"}]},"taskType":"RETRIEVAL_DOCUMENT"}`, geminiAuth)
	one := floats(t, get(t, obj(t, b), "embedding", "values"))
	if len(one) != 3072 {
		t.Fatalf("%d values", len(one))
	}
	_, b = do(t, s.URL+"/v1beta/models/gemini-embedding-001:batchEmbedContents",
		`{"requests":[{"model":"models/gemini-embedding-001","content":{"parts":[{"text":"hello world"}]}},{"model":"models/gemini-embedding-001","content":{"parts":[{"text":"other"}]},"outputDimensionality":16}]}`, geminiAuth)
	m := obj(t, b)
	if !jsonEqual(t, floats(t, get(t, m, "embeddings", 0, "values")), one) {
		t.Fatal("batch and single embeddings of the same text differ")
	}
	if n := len(get(t, m, "embeddings", 1, "values").([]any)); n != 16 || has(m, "usageMetadata") {
		t.Fatalf("%d values", n)
	}
	resp, b := do(t, s.URL+"/v1beta/models/gemini-embedding-001:batchEmbedContents",
		`{"requests":[{"model":"models/other","content":{"parts":[{"text":"x"}]}}]}`, geminiAuth)
	if resp.StatusCode != 400 || get(t, obj(t, b), "error", "status") != "INVALID_ARGUMENT" {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
}

func TestGeminiErrors(t *testing.T) {
	s := start(t, Options{})
	url := s.URL + "/v1beta/models/gemini-2.5-flash:generateContent"
	resp, b := do(t, url, geminiBody, openAIAuth) // a bearer token is not a Gemini key
	e := get(t, obj(t, b), "error")
	if resp.StatusCode != 403 || get(t, e, "code") != 403.0 || get(t, e, "status") != "PERMISSION_DENIED" || get(t, e, "message") == "" {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	for _, body := range []string{`{"contents":[]}`, `[1]`, `{"contents":"x"}`} {
		resp, b = do(t, url, body, geminiAuth)
		if resp.StatusCode != 400 || get(t, obj(t, b), "error", "status") != "INVALID_ARGUMENT" {
			t.Fatalf("%s: %d %s", body, resp.StatusCode, b)
		}
	}
	s.SetOptions(Options{FailStatus: 429})
	resp, b = do(t, s.URL+"/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", geminiBody, geminiAuth)
	if resp.StatusCode != 429 || get(t, obj(t, b), "error", "status") != "RESOURCE_EXHAUSTED" || get(t, obj(t, b), "error", "code") != 429.0 {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
}

func TestGoogleJSON(t *testing.T) {
	got := string(googleJSON(map[string]any{"a": `x: "y\" z":`, "b": []any{map[string]any{"c": 1}}}))
	want := `{"a": "x: \"y\\\" z\":","b": [{"c": 1}]}`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	var back map[string]any
	if err := json.Unmarshal([]byte(got), &back); err != nil || back["a"] != `x: "y\" z":` {
		t.Fatalf("does not decode back: %v %v", err, back)
	}
}

// TestGeminiToolsAsOneObject: the API takes "tools" as one Tool object as
// well as an array (DESIGN §13.3); the fake answers both alike.
func TestGeminiToolsAsOneObject(t *testing.T) {
	s := start(t, Options{})
	asArray := `{"contents":[{"role":"user","parts":[{"text":"What is the weather in Paris?"}]}],` + geminiTools + `}`
	asObject := strings.Replace(strings.Replace(asArray, `"tools":[{`, `"tools":{`, 1), `}]}]}`, `}]}}`, 1)
	if asObject == asArray || !strings.Contains(asObject, `"tools":{"functionDeclarations"`) {
		t.Fatalf("no object form: %s", asObject)
	}
	_, a := do(t, s.URL+"/v1beta/models/gemini-2.5-flash:generateContent", asArray, geminiAuth)
	_, o := do(t, s.URL+"/v1beta/models/gemini-2.5-flash:generateContent", asObject, geminiAuth)
	fa := get(t, obj(t, a), "candidates", 0, "content", "parts", 0, "functionCall")
	fo := get(t, obj(t, o), "candidates", 0, "content", "parts", 0, "functionCall")
	if get(t, fo, "name") != "get_weather" || !jsonEqual(t, fa, fo) {
		t.Fatalf("array: %s\nobject: %s", a, o)
	}
}
