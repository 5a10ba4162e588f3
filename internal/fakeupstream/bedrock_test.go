package fakeupstream

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

func bedrockCall(t *testing.T, url, keyID, secret, region string, body []byte) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	sum := sha256.Sum256(body)
	if err := v4.NewSigner().SignHTTP(context.Background(), aws.Credentials{AccessKeyID: keyID, SecretAccessKey: secret}, req, hex.EncodeToString(sum[:]), "bedrock", region, time.Now()); err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// TestBedrockChecksSignatures: only SigV4 signatures made with the fake's
// own credentials (and region) over what it received are accepted; a
// tampered body, another secret, another key id or another region are 403.
func TestBedrockChecksSignatures(t *testing.T) {
	f, err := StartBedrock(BedrockOptions{AccessKeyID: "AKIDFAKE", SecretAccessKey: "s3cret", Region: "us-east-1"})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	url := f.URL + "/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse"
	body := []byte(`{"messages":[{"role":"user","content":[{"text":"hi there"}]}],"inferenceConfig":{"maxTokens":1}}`)
	resp, b := bedrockCall(t, url, "AKIDFAKE", "s3cret", "us-east-1", body)
	if resp.StatusCode != 200 || f.Signed() != 1 {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
	var out struct {
		Output struct {
			Message struct {
				Content []struct{ Text string } `json:"content"`
			} `json:"message"`
		} `json:"output"`
		StopReason string         `json:"stopReason"`
		Usage      map[string]int `json:"usage"`
	}
	if err := json.Unmarshal(b, &out); err != nil || out.Output.Message.Content[0].Text != "Echo:" || out.StopReason != "max_tokens" || out.Usage["totalTokens"] != 3 {
		t.Fatalf("answer %s (%v)", b, err)
	}
	for _, c := range []struct{ key, secret, region string }{{"AKIDFAKE", "other", "us-east-1"}, {"AKIDOTHER", "s3cret", "us-east-1"}, {"AKIDFAKE", "s3cret", "eu-west-1"}} {
		resp, b := bedrockCall(t, url, c.key, c.secret, c.region, body)
		if resp.StatusCode != http.StatusForbidden || resp.Header.Get("x-amzn-ErrorType") == "" {
			t.Errorf("%v: %d %s", c, resp.StatusCode, b)
		}
	}
	// A body other than the one signed.
	req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
	sum := sha256.Sum256([]byte("{}"))
	_ = v4.NewSigner().SignHTTP(context.Background(), aws.Credentials{AccessKeyID: "AKIDFAKE", SecretAccessKey: "s3cret"}, req, hex.EncodeToString(sum[:]), "bedrock", "us-east-1", time.Now())
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || f.Signed() != 1 {
		t.Fatalf("tampered body: %d, signed %d", resp.StatusCode, f.Signed())
	}
}

// TestBedrockStreamFrames: ConverseStream answers valid event-stream frames
// with Bedrock's headers and padding, spelling the same answer.
func TestBedrockStreamFrames(t *testing.T) {
	f, err := StartBedrock(BedrockOptions{AccessKeyID: "AKIDFAKE", SecretAccessKey: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	body := []byte(`{"messages":[{"role":"user","content":[{"text":"stream this"}]}]}`)
	resp, b := bedrockCall(t, f.URL+"/model/m/converse-stream", "AKIDFAKE", "s3cret", "us-west-2", body)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/vnd.amazon.eventstream" {
		t.Fatalf("%d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	rd := bytes.NewReader(b)
	var types []string
	var text strings.Builder
	for rd.Len() > 0 {
		msg, err := eventstream.NewDecoder().Decode(rd, nil)
		if err != nil {
			t.Fatal(err)
		}
		if msg.Headers.Get(":message-type").String() != "event" || msg.Headers.Get(":content-type").String() != "application/json" {
			t.Fatalf("headers %v", msg.Headers)
		}
		typ := msg.Headers.Get(":event-type").String()
		types = append(types, typ)
		var ev map[string]any
		if err := json.Unmarshal(msg.Payload, &ev); err != nil || ev["p"] == nil {
			t.Fatalf("%s payload %s", typ, msg.Payload)
		}
		if d, ok := ev["delta"].(map[string]any); ok {
			text.WriteString(d["text"].(string))
		}
	}
	if text.String() != "Echo: stream this" || types[0] != "messageStart" || types[len(types)-2] != "messageStop" || types[len(types)-1] != "metadata" {
		t.Fatalf("%q %v", text.String(), types)
	}
}
