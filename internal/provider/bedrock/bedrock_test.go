package bedrock

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/traceforge/traceforge/internal/provider"
)

func TestRouteDecodesModelAndKeysBothRoutesAlike(t *testing.T) {
	f := NewConverse()
	cases := []struct {
		path, want string
		stream     bool
	}{
		{"/model/anthropic.claude-3-haiku-20240307-v1:0/converse", "/model/anthropic.claude-3-haiku-20240307-v1:0/converse", false},
		{"/model/anthropic.claude-3-haiku-20240307-v1:0/converse-stream", "/model/anthropic.claude-3-haiku-20240307-v1:0/converse", true},
		{"/prefix/model/us.amazon.nova-lite-v1:0/converse", "/model/us.amazon.nova-lite-v1:0/converse", false},
		// An inference profile's ARN, decoded: its "/" stays in the model id.
		{"/model/arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-3-haiku-20240307-v1:0/converse",
			"/model/arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-3-haiku-20240307-v1:0/converse", false},
	}
	for _, c := range cases {
		e, ok := f.Route("POST", c.path)
		if !ok || string(e) != c.want {
			t.Errorf("Route(%s) = %q, %v; want %q", c.path, e, ok, c.want)
		}
		if got := f.Streams(c.path, nil); got != c.stream {
			t.Errorf("Streams(%s) = %v", c.path, got)
		}
		// A stored endpoint routes to itself (registry.Lookup).
		if e2, ok := f.Route("POST", c.want); !ok || e2 != e {
			t.Errorf("Route(stored %s) = %q, %v", c.want, e2, ok)
		}
	}
	for _, p := range []string{"/model/x/invoke-async", "/model//converse", "/model/x/", "/v1/chat/completions", "/models/x:converse"} {
		if e, ok := f.Route("POST", p); ok {
			t.Errorf("Route(%s) = %q, want not owned", p, e)
		}
	}
	if _, ok := f.Route("GET", "/model/x/converse"); ok {
		t.Error("GET routed")
	}
}

func TestBindPath(t *testing.T) {
	f := NewConverse()
	req := map[string]any{"messages": []any{}}
	if err := f.BindPath("/model/m:0/converse", req); err != nil || req["model"] != "m:0" {
		t.Fatalf("BindPath: %v, model %v", err, req["model"])
	}
	err := f.BindPath("/model/m:0/converse", map[string]any{"model": "other"})
	if !errors.Is(err, provider.ErrContradictsPath) {
		t.Fatalf("contradicting model: %v", err)
	}
	if lb := f.LiveBody(req); lb["model"] != nil || lb["messages"] == nil {
		t.Fatalf("LiveBody = %v", lb)
	}
}

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	m, err := provider.Decode([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

const toolAnswer = `{"output":{"message":{"role":"assistant","content":[
 {"text":"Let me look."},
 {"toolUse":{"toolUseId":"tooluse_abc","name":"get_weather","input":{"city":"Paris","days":2}}}]}},
 "stopReason":"tool_use",
 "usage":{"inputTokens":20,"outputTokens":12,"totalTokens":32},
 "metrics":{"latencyMs":321}}`

func TestFields(t *testing.T) {
	f, err := NewConverse().Fields(decode(t, toolAnswer))
	if err != nil {
		t.Fatal(err)
	}
	if f.Content != "Let me look." || f.FinishReason != "tool_use" || f.TokensUsed != 32 {
		t.Fatalf("fields = %+v", f)
	}
	if len(f.ToolCalls) != 1 {
		t.Fatalf("tool calls = %v", f.ToolCalls)
	}
	tc := provider.ToolCalls(f.ToolCalls)
	if tc[0].Name != "get_weather" || !tc[0].Known {
		t.Fatalf("ToolCalls = %+v", tc)
	}
	if f.Usage["inputTokens"] == nil {
		t.Fatalf("usage = %v", f.Usage)
	}
	_, err = NewConverse().Fields(decode(t, `{"output":{"message":{"role":"assistant","content":[{"text":"x"}]}},"stopReason":"end_turn"}`))
	if !errors.Is(err, provider.ErrNoUsage) {
		t.Fatalf("no usage: %v", err)
	}
	_, err = NewConverse().Fields(decode(t, `{"output":{},"stopReason":"end_turn","usage":{"totalTokens":1}}`))
	if !errors.Is(err, provider.ErrMalformed) {
		t.Fatalf("no message: %v", err)
	}
}

func TestKeyRequestRenumbersToolUseIDs(t *testing.T) {
	req := decode(t, `{"model":"m","messages":[
	 {"role":"user","content":[{"text":"weather?"}]},
	 {"role":"assistant","content":[{"toolUse":{"toolUseId":"tooluse_Zq","name":"w","input":{}}}]},
	 {"role":"user","content":[{"toolResult":{"toolUseId":"tooluse_Zq","content":[{"text":"sunny"}]}}]}]}`)
	orig := provider.DeepCopy(req)
	k := NewConverse().KeyRequest(req, nil)
	msgs := k["messages"].([]any)
	a := msgs[1].(map[string]any)["content"].([]any)[0].(map[string]any)["toolUse"].(map[string]any)
	u := msgs[2].(map[string]any)["content"].([]any)[0].(map[string]any)["toolResult"].(map[string]any)
	if a["toolUseId"] != "call_1" || u["toolUseId"] != "call_1" {
		t.Fatalf("ids = %v, %v", a["toolUseId"], u["toolUseId"])
	}
	if !reflect.DeepEqual(req, orig) {
		t.Fatal("KeyRequest modified its argument")
	}
}

// frames synthesizes body's stream and returns it with its frames.
func frames(t *testing.T, body map[string]any) ([]byte, []Frame) {
	t.Helper()
	var b bytes.Buffer
	writes := 0
	if err := NewConverse().SynthesizeStream(body, false, &b, func() { writes++ }); err != nil {
		t.Fatal(err)
	}
	var fr FrameReader
	var out []Frame
	if err := fr.Feed(b.Bytes(), func(f Frame) error { out = append(out, f); return nil }); err != nil {
		t.Fatal(err)
	}
	if fr.Pending() != 0 || writes != len(out) {
		t.Fatalf("pending %d, %d flushes for %d frames", fr.Pending(), writes, len(out))
	}
	return b.Bytes(), out
}

func TestStreamRoundTrip(t *testing.T) {
	bodies := []string{
		toolAnswer,
		`{"output":{"message":{"role":"assistant","content":[{"text":"Hello there, a text longer than one piece of sixteen runes: é✓"}]}},"stopReason":"end_turn","usage":{"inputTokens":3,"outputTokens":9,"totalTokens":12,"cacheReadInputTokens":0},"metrics":{"latencyMs":5},"additionalModelResponseFields":{"stop_sequence":null}}`,
		`{"output":{"message":{"role":"assistant","content":[{"reasoningContent":{"reasoningText":{"text":"thinking about it","signature":"c2ln"}}},{"text":"42"}]}},"stopReason":"end_turn","usage":{"inputTokens":1,"outputTokens":2,"totalTokens":3},"metrics":{"latencyMs":1}}`,
		`{"output":{"message":{"role":"assistant","content":[]}},"stopReason":"max_tokens","usage":{"inputTokens":1,"outputTokens":0,"totalTokens":1},"metrics":{"latencyMs":1},"trace":{"guardrail":{}}}`,
	}
	for _, s := range bodies {
		body := decode(t, s)
		raw, fs := frames(t, body)
		if fs[0].Type != "messageStart" || fs[0].MessageType != "event" {
			t.Fatalf("first frame %+v", fs[0])
		}
		// Assembled in pieces of every size, the stream gives back body.
		for _, n := range []int{1, 7, 64, len(raw)} {
			a := NewConverse().NewAssembler()
			for i := 0; i < len(raw); i += n {
				if _, err := a.Write(raw[i:min(i+n, len(raw))]); err != nil {
					t.Fatal(err)
				}
			}
			got, err := a.Done()
			if err != nil {
				t.Fatal(err)
			}
			gb, _ := provider.Marshal(got)
			wb, _ := provider.Marshal(body)
			if !bytes.Equal(gb, wb) {
				t.Fatalf("pieces of %d:\n got %s\nwant %s", n, gb, wb)
			}
		}
	}
}

func TestStreamPaddingAndBreaks(t *testing.T) {
	var b bytes.Buffer
	enc := func(typ string, v string) {
		f, err := EncodeEvent(typ, decode(t, v))
		if err != nil {
			t.Fatal(err)
		}
		b.Write(f)
	}
	// Bedrock pads every event with "p"; it is not part of the answer.
	enc("messageStart", `{"role":"assistant","p":"abcdefgh"}`)
	enc("contentBlockDelta", `{"contentBlockIndex":0,"delta":{"text":"Hi"},"p":"abc"}`)
	enc("contentBlockStop", `{"contentBlockIndex":0,"p":"ab"}`)
	enc("messageStop", `{"stopReason":"end_turn","p":"abcd"}`)
	enc("metadata", `{"usage":{"inputTokens":1,"outputTokens":1,"totalTokens":2},"metrics":{"latencyMs":3},"p":"x"}`)
	a := NewConverse().NewAssembler()
	_, _ = a.Write(b.Bytes())
	got, err := a.Done()
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := provider.Marshal(got); strings.Contains(string(s), `"p"`) {
		t.Fatalf("padding kept: %s", s)
	}
	// Cut before messageStop: broken.
	cut := b.Bytes()[:b.Len()/2]
	a = NewConverse().NewAssembler()
	_, _ = a.Write(cut)
	if _, err := a.Done(); !errors.Is(err, provider.ErrBrokenStream) {
		t.Fatalf("cut stream: %v", err)
	}
	// An exception frame breaks it.
	ex, err := EncodeException("throttlingException", "slow down")
	if err != nil {
		t.Fatal(err)
	}
	a = NewConverse().NewAssembler()
	_, _ = a.Write(append(append([]byte{}, b.Bytes()[:40]...), ex...))
	_, err = a.Done()
	if !errors.Is(err, provider.ErrStreamError) && !errors.Is(err, provider.ErrMalformed) {
		t.Fatalf("exception: %v", err)
	}
	a = NewConverse().NewAssembler()
	_, _ = a.Write(ex)
	if _, err := a.Done(); !errors.Is(err, provider.ErrStreamError) || !strings.Contains(err.Error(), "slow down") {
		t.Fatalf("exception: %v", err)
	}
	// A corrupted CRC is malformed.
	bad := append([]byte{}, b.Bytes()...)
	bad[20] ^= 0xff
	a = NewConverse().NewAssembler()
	if _, err := a.Write(bad); !errors.Is(err, provider.ErrMalformed) {
		t.Fatalf("bad crc: %v", err)
	}
}

func TestErrorShape(t *testing.T) {
	f := NewConverse()
	typ, _ := f.MissError()
	if typ != "ResourceNotFoundException" || f.ErrorType(http.StatusBadGateway) != "ServiceUnavailableException" {
		t.Fatal(typ)
	}
	if got := string(f.ErrorBody("ValidationException", "", "bad")); got != `{"__type":"ValidationException","message":"bad"}` {
		t.Fatal(got)
	}
}

// isolateAWS points the default chain at nothing but env: no shared
// files, no instance metadata endpoint.
func isolateAWS(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("AWS_CONFIG_FILE", dir+"/config")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", dir+"/credentials")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	for _, k := range []string{"AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_DEFAULT_REGION", "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN", "AWS_BEARER_TOKEN_BEDROCK"} {
		t.Setenv(k, "")
	}
}

func TestPrepareUpstreamResigns(t *testing.T) {
	isolateAWS(t)
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDTRACEFORGE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "traceforge-secret")
	t.Setenv("AWS_REGION", "eu-west-1")
	body := []byte(`{"messages":[]}`)
	out, _ := http.NewRequestWithContext(context.Background(), "POST", "https://bedrock-runtime.{region}.amazonaws.com/model/m%3A0/converse", bytes.NewReader(body))
	if out == nil {
		// The template host does not parse: build the URL by hand, as
		// record does from the parsed upstream.
		out, _ = http.NewRequestWithContext(context.Background(), "POST", "https://placeholder/model/m%3A0/converse", bytes.NewReader(body))
		out.URL.Host = "bedrock-runtime." + RegionPlaceholder + ".amazonaws.com"
	}
	out.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKIDAPP/20261128/us-west-2/bedrock/aws4_request, SignedHeaders=host;x-amz-date, Signature=abc")
	out.Header.Set("X-Amz-Date", "20261128T000000Z")
	out.Header.Set("X-Amz-Security-Token", "apps-session-token")
	out.Header.Set("X-Amz-Content-Sha256", "UNSIGNED")
	if err := prepareUpstream(out, body); err != nil {
		t.Fatal(err)
	}
	if out.URL.Host != "bedrock-runtime.us-west-2.amazonaws.com" {
		t.Fatalf("host %s: want the client's region", out.URL.Host)
	}
	if out.URL.EscapedPath() != "/model/m%3A0/converse" {
		t.Fatalf("escaped path %s", out.URL.EscapedPath())
	}
	auth := out.Header.Get("Authorization")
	if !strings.Contains(auth, "Credential=AKIDTRACEFORGE/") || !strings.Contains(auth, "/us-west-2/bedrock/aws4_request") {
		t.Fatalf("Authorization %s", auth)
	}
	if out.Header.Get("X-Amz-Security-Token") != "" || out.Header.Get("X-Amz-Content-Sha256") != "" {
		t.Fatal("the client's session token or payload hash survived")
	}
	// The signature is the SDK signer's over what is sent.
	check := out.Clone(context.Background())
	check.Header.Del("Authorization")
	when, err := time.Parse("20060102T150405Z", out.Header.Get("X-Amz-Date"))
	if err != nil {
		t.Fatal(err)
	}
	if err := v4.NewSigner().SignHTTP(context.Background(), aws.Credentials{AccessKeyID: "AKIDTRACEFORGE", SecretAccessKey: "traceforge-secret"},
		check, payloadHash(body), "bedrock", "us-west-2", when); err != nil {
		t.Fatal(err)
	}
	if check.Header.Get("Authorization") != auth {
		t.Fatalf("signature differs:\n%s\n%s", check.Header.Get("Authorization"), auth)
	}
}

func payloadHash(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func TestPrepareUpstreamBearerPassesThrough(t *testing.T) {
	isolateAWS(t)
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	t.Setenv("AWS_REGION", "ap-south-1")
	out, _ := http.NewRequest("POST", "https://placeholder/model/m/converse", nil)
	out.URL.Host = "bedrock-runtime." + RegionPlaceholder + ".amazonaws.com"
	out.Header.Set("Authorization", "Bearer ABSKexample")
	if err := prepareUpstream(out, nil); err != nil {
		t.Fatal(err)
	}
	if out.Header.Get("Authorization") != "Bearer ABSKexample" || out.URL.Host != "bedrock-runtime.ap-south-1.amazonaws.com" {
		t.Fatalf("%s %s", out.Header.Get("Authorization"), out.URL.Host)
	}
	t.Setenv("AWS_REGION", "")
	out.URL.Host = "bedrock-runtime." + RegionPlaceholder + ".amazonaws.com"
	if err := prepareUpstream(out, nil); err == nil || !strings.Contains(err.Error(), "AWS_REGION") {
		t.Fatalf("no region: %v", err)
	}
}

// TestPrepareUpstreamSignsUnsigned: a request with no credential (verify
// --live without a Bedrock API key) is signed with traceforge's
// credentials for its AWS_REGION.
func TestPrepareUpstreamSignsUnsigned(t *testing.T) {
	isolateAWS(t)
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDTRACEFORGE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "traceforge-secret")
	t.Setenv("AWS_REGION", "eu-north-1")
	out, _ := http.NewRequest("POST", "https://placeholder/model/m/converse", nil)
	out.URL.Host = "bedrock-runtime." + RegionPlaceholder + ".amazonaws.com"
	if err := prepareUpstream(out, []byte("{}")); err != nil {
		t.Fatal(err)
	}
	if a := out.Header.Get("Authorization"); !strings.Contains(a, "Credential=AKIDTRACEFORGE/") || !strings.Contains(a, "/eu-north-1/bedrock/aws4_request") ||
		out.URL.Host != "bedrock-runtime.eu-north-1.amazonaws.com" {
		t.Fatalf("%s %s", a, out.URL.Host)
	}
}

func TestParseScope(t *testing.T) {
	s, ok := ParseScope("AWS4-HMAC-SHA256 Credential=AKID/20261128/us-east-1/bedrock/aws4_request, SignedHeaders=host, Signature=x")
	if !ok || s.Region != "us-east-1" || s.Service != "bedrock" {
		t.Fatal(s, ok)
	}
	for _, a := range []string{"Bearer x", "AWS4-HMAC-SHA256 Credential=AKID/x", ""} {
		if _, ok := ParseScope(a); ok {
			t.Errorf("ParseScope(%q) ok", a)
		}
	}
}

func TestCountTokensIsAnExchange(t *testing.T) {
	if !IsExchange("POST", "/model/anthropic.claude-3-haiku-20240307-v1:0/count-tokens") || IsExchange("GET", "/model/m/count-tokens") || IsExchange("POST", "/model/m/converse") {
		t.Fatal("count-tokens routes")
	}
}
