package verify

import (
	"github.com/traceforge/traceforge/internal/provider/registry"
	"testing"

	"github.com/traceforge/traceforge/internal/provider"
)

// TestLiveURLKeepsTheQuery: --live posts to the endpoint after the base
// URL's path and keeps the base URL's query (a gateway's ?api-key=…), as
// record does; it used to append the endpoint after the query.
func TestLiveURLKeepsTheQuery(t *testing.T) {
	o := LiveOptions{Upstreams: map[provider.Name]string{provider.OpenAI: "http://gw.test/openai/v1/?api-key=k&x=1", provider.Anthropic: "http://gw.test/anth?key=k"}}
	for _, c := range []struct {
		p    provider.Name
		e    provider.Endpoint
		want string
	}{
		{provider.OpenAI, provider.ChatCompletions, "http://gw.test/openai/v1/chat/completions?api-key=k&x=1"},
		{provider.Anthropic, provider.Messages, "http://gw.test/anth/v1/messages?key=k"},
	} {
		u, err := liveURL(o, registry.Provider(c.p), c.e)
		if err != nil || u.String() != c.want {
			t.Errorf("liveURL(%s) = %v, %v; want %s", c.p, u, err, c.want)
		}
	}
}
