// Command tf-fake-upstream serves the deterministic fake LLM upstream
// (OpenAI chat completions, completions, Responses and embeddings, Anthropic
// messages, Gemini and Ollama native) used by `make demo`, the end-to-end
// suite and the benchmarks.
//
// It prints FAKE_UPSTREAM_URL=http://127.0.0.1:PORT as its first stdout line,
// then OPENAI_BASE_URL (with /v1), ANTHROPIC_BASE_URL,
// GOOGLE_GEMINI_BASE_URL and OLLAMA_HOST, and serves until SIGINT or SIGTERM.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/traceforge/traceforge/internal/fakeupstream"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run parses args, serves until ctx is done and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tf-fake-upstream", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:0", "address to listen on (host:port)")
	var o fakeupstream.Options
	fs.BoolVar(&o.Nondeterministic, "nondeterministic", false, "append a per-call suffix to every answer")
	fs.StringVar(&o.ModelSuffix, "model-suffix", "", "append this to the served model name (drift)")
	fs.StringVar(&o.ContentPrefix, "content-prefix", "", "prepend this to every answer (drift)")
	fs.IntVar(&o.FailStatus, "fail-status", 0, "answer every call with this HTTP status and a provider-shaped error")
	fs.BoolVar(&o.ResetMidStream, "reset-mid-stream", false, "streams: send two events then reset the TCP connection")
	fs.DurationVar(&o.FirstByteDelay, "first-byte-delay", 0, "wait this long before the first byte of an answer")
	fs.DurationVar(&o.ChunkDelay, "chunk-delay", 0, "streams: wait this long between events")
	fs.BoolVar(&o.RejectIncludeUsage, "reject-include-usage", false, "OpenAI: answer 400 when stream_options.include_usage is present")
	fs.BoolVar(&o.Gzip, "gzip", false, "gzip non-streamed JSON answers when Accept-Encoding allows it")
	fs.BoolVar(&o.MintIDs, "mint-ids", false, "Responses/Gemini/Ollama: new ids and timestamps on every call (default: derived from the request)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "tf-fake-upstream: unexpected arguments: %v\n", fs.Args())
		return 2
	}
	if o.FailStatus != 0 && (o.FailStatus < 100 || o.FailStatus > 999) {
		fmt.Fprintf(stderr, "tf-fake-upstream: -fail-status %d is not an HTTP status\n", o.FailStatus)
		return 2
	}
	srv, err := fakeupstream.StartOn(*listen, o)
	if err != nil {
		fmt.Fprintf(stderr, "tf-fake-upstream: %v\n", err)
		return 2
	}
	fmt.Fprintf(stdout, "FAKE_UPSTREAM_URL=%s\nOPENAI_BASE_URL=%s/v1\nANTHROPIC_BASE_URL=%s\nGOOGLE_GEMINI_BASE_URL=%s\nOLLAMA_HOST=%s\n",
		srv.URL, srv.URL, srv.URL, srv.URL, srv.URL)
	if f, ok := stdout.(*os.File); ok {
		_ = f.Sync()
	}
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	fmt.Fprintf(stderr, "tf-fake-upstream: stopped after %d requests\n", srv.Requests())
	return 0
}
