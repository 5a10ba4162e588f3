package provider

import "strings"

// EquivalentMembers lists, for a key endpoint, groups of request members
// (JSON pointers) that play the same part: OpenAI chat completions'
// max_completion_tokens satisfies the max_tokens requirement, and a request
// holding both is invalid (DESIGN §11 "Response fields"). A request default
// (DESIGN §13.2) never sets a member of a group when another one is
// present.
func EquivalentMembers(endpoint Endpoint) [][]string {
	// Any chat completions route: OpenAI's, a named upstream's, Azure
	// OpenAI's (…/openai/deployments/{d}/chat/completions?api-version=…).
	e, _, _ := strings.Cut(string(endpoint), "?")
	if strings.HasSuffix(e, "/chat/completions") {
		return [][]string{{"/max_completion_tokens", "/max_tokens"}}
	}
	return nil
}
