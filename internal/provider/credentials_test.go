package provider

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

func TestCredentials(t *testing.T) {
	cases := []struct {
		name   string
		header map[string]string
		query  string
		want   []Family // in order; nil = none recognised
	}{
		{"sigv4", map[string]string{"Authorization": "AWS4-HMAC-SHA256 Credential=AKIA/x, Signature=s"}, "", []Family{FamilyAWS}},
		{"sigv4 lower", map[string]string{"authorization": "aws4-hmac-sha256 Credential=AKIA/x"}, "", []Family{FamilyAWS}},
		{"session token", map[string]string{"X-Amz-Security-Token": "t"}, "", []Family{FamilyAWS}},
		{"presigned", nil, "X-Amz-Credential=a&X-Amz-Signature=b", []Family{FamilyAWS}},
		{"bedrock key", map[string]string{"Authorization": "Bearer ABSKxyz"}, "", []Family{FamilyAWS}},
		{"google oauth", map[string]string{"Authorization": "Bearer ya29.abc"}, "", []Family{FamilyGoogle}},
		{"goog key", map[string]string{"x-goog-api-key": "AIza"}, "", []Family{FamilyGoogle}},
		{"key query", nil, "key=AIza", []Family{FamilyGoogle}},
		{"azure", map[string]string{"api-key": "k"}, "", []Family{FamilyAzure}},
		{"two kinds", map[string]string{"api-key": "k", "Authorization": "Bearer ya29.x"}, "", []Family{FamilyGoogle, FamilyAzure}},
		{"openai key", map[string]string{"Authorization": "Bearer sk-proj-abc"}, "", nil},
		{"anthropic key", map[string]string{"x-api-key": "sk-ant-abc"}, "", nil},
		{"none", nil, "api-version=2024-10-21", nil},
	}
	for _, tc := range cases {
		h := http.Header{}
		for k, v := range tc.header {
			h.Set(k, v)
		}
		q, _ := url.ParseQuery(tc.query)
		got := Credentials(h, q)
		var fams []Family
		for _, c := range got {
			fams = append(fams, c.Family)
			for _, v := range tc.header {
				if secret := strings.TrimPrefix(v, "Bearer "); len(secret) > 3 && strings.Contains(c.Kind, secret) {
					t.Errorf("%s: kind %q holds the value", tc.name, c.Kind)
				}
			}
		}
		if len(fams) != len(tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, fams, tc.want)
			continue
		}
		for i := range fams {
			if fams[i] != tc.want[i] {
				t.Errorf("%s: got %v, want %v", tc.name, fams, tc.want)
			}
		}
	}
}

func TestForeignCredentialAndHosts(t *testing.T) {
	h := http.Header{"Authorization": {"Bearer ya29.x"}}
	if _, ok := ForeignCredential(h, nil, FamilyGoogle); ok {
		t.Error("a Google token is foreign to Google")
	}
	if c, ok := ForeignCredential(h, nil, FamilyOpenAI); !ok || c.Family != FamilyGoogle {
		t.Errorf("a Google token to OpenAI: %v %v", c, ok)
	}
	for host, want := range map[string]Family{
		"bedrock-runtime.us-east-1.amazonaws.com": FamilyAWS,
		"us-central1-aiplatform.googleapis.com":   FamilyGoogle,
		"generativelanguage.googleapis.com:443":   FamilyGoogle,
		"myres.openai.azure.com":                  FamilyAzure,
		"API.OPENAI.COM.":                         FamilyOpenAI,
		"api.anthropic.com":                       FamilyAnthropic,
	} {
		if got, ok := FamilyOfHost(host); !ok || got != want {
			t.Errorf("FamilyOfHost(%q) = %q, %v; want %q", host, got, ok, want)
		}
	}
	for _, host := range []string{"127.0.0.1", "evilamazonaws.com", "amazonaws.com.evil.example", "localhost", "[::1]:8080"} {
		if f, ok := FamilyOfHost(host); ok {
			t.Errorf("FamilyOfHost(%q) = %q, want unknown", host, f)
		}
	}
}
