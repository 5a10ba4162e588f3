package cli

import (
	"slices"
	"testing"
)

// TestKeyEnvGivesReplayCredentials: replay gives COMMAND each provider's
// further replay variables (Bedrock's dummy AWS credentials and region)
// only when they are unset, and none of them when the provider's key
// (AWS_BEARER_TOKEN_BEDROCK) is set.
func TestKeyEnvGivesReplayCredentials(t *testing.T) {
	env := map[string]string{}
	io := &IOStreams{Getenv: func(k string) string { return env[k] }}
	got := keyEnv(io)
	for _, want := range []string{"AWS_ACCESS_KEY_ID=traceforge-replay", "AWS_SECRET_ACCESS_KEY=traceforge-replay", "AWS_REGION=us-east-1", "AWS_DEFAULT_REGION=us-east-1", "OPENAI_API_KEY=traceforge-replay"} {
		if !slices.Contains(got, want) {
			t.Errorf("keyEnv() = %q, lacks %s", got, want)
		}
	}
	env["AWS_REGION"] = "eu-central-1"
	env["AWS_ACCESS_KEY_ID"] = "AKIAMINE"
	got = keyEnv(io)
	for _, kv := range got {
		if kv == "AWS_REGION=us-east-1" || kv == "AWS_ACCESS_KEY_ID=traceforge-replay" {
			t.Errorf("keyEnv() overrides a set variable: %q", got)
		}
	}
	if !slices.Contains(got, "AWS_SECRET_ACCESS_KEY=traceforge-replay") {
		t.Errorf("keyEnv() = %q, lacks the unset secret", got)
	}
	env = map[string]string{"AWS_BEARER_TOKEN_BEDROCK": "ABSKmine"}
	for _, kv := range keyEnv(io) {
		if len(kv) > 4 && kv[:4] == "AWS_" {
			t.Errorf("with a Bedrock API key, keyEnv() still sets %s", kv)
		}
	}
}
