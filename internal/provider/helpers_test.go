package provider_test

import (
	"fmt"
	"io"
	"time"

	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/provider/registry"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// The tests of this package drive the registered wire formats (the shared
// OpenAI machinery here and the Anthropic sub-package alike) through the
// registry, by provider and key endpoint.

var (
	canonical = provider.Canonical
	maxNotes  = provider.MaxNotes
)

func format(p provider.Name, e provider.Endpoint) provider.Format {
	f := registry.Lookup(p, e)
	if f == nil {
		panic(fmt.Sprintf("no wire format %s %s", p, e))
	}
	return f
}

func newAssembler(p provider.Name, e provider.Endpoint) provider.Assembler {
	return format(p, e).NewAssembler()
}

func extract(p provider.Name, e provider.Endpoint, body map[string]any) (snapshot.Fields, error) {
	return format(p, e).Fields(body)
}

func synthesizeStream(p provider.Name, e provider.Endpoint, body map[string]any, includeUsage bool, w io.Writer, flush func()) error {
	return format(p, e).SynthesizeStream(body, includeUsage, w, flush)
}

func synthesizeBody(p provider.Name, e provider.Endpoint, id string, created time.Time, model string, f snapshot.Fields) map[string]any {
	return format(p, e).SynthesizeBody(id, created, model, f)
}
