package traceforge_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/traceforge/traceforge"
	"github.com/traceforge/traceforge/internal/fakeupstream"
)

// ask makes one deterministic chat call with go-openai through tr: zero
// temperature (go-openai drops a real zero, so it sends the smallest float,
// which traceforge counts as zero) and a fixed seed.
func ask(tr *traceforge.Transport, baseURL, question string) (string, error) {
	cfg := openai.DefaultConfig("test-key") // replay needs no real key
	cfg.BaseURL = baseURL
	cfg.HTTPClient = tr.Client()
	client := openai.NewClientWithConfig(cfg)
	resp, err := client.CreateChatCompletion(context.Background(), chatRequest(question))
	if err != nil {
		return "", err
	}
	return resp.Choices[0].Message.Content, nil
}

func chatRequest(question string) openai.ChatCompletionRequest {
	seed := 42
	return openai.ChatCompletionRequest{
		Model:               "gpt-4o-mini",
		Messages:            []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: question}},
		Temperature:         math.SmallestNonzeroFloat32,
		Seed:                &seed,
		MaxCompletionTokens: 20,
	}
}

// Record a call against the API once, then replay it with the API gone. In
// a real test suite the mode comes from traceforge.ModeFromEnv(): run
// `TRACEFORGE_MODE=record go test ./...` locally, commit .ai-snapshots, and
// CI replays.
func ExampleTransport() {
	api, _ := fakeupstream.Start(fakeupstream.Options{}) // stands in for https://api.openai.com
	dir, _ := os.MkdirTemp("", "ai-snapshots")
	defer os.RemoveAll(dir)

	for _, mode := range []traceforge.Mode{traceforge.Record, traceforge.Replay} {
		tr, err := traceforge.NewTransport(traceforge.Options{Mode: mode, Dir: dir})
		if err != nil {
			fmt.Println(err)
			return
		}
		answer, err := ask(tr, api.URL+"/v1", "Summarize snapshot testing")
		if err != nil {
			fmt.Println(err)
		}
		if err := tr.Close(); err != nil {
			fmt.Println(err)
		}
		fmt.Printf("%s: %s\n", mode, answer)
		api.Close() // replay never contacts the API
	}
	// Output:
	// record: Echo: Summarize snapshot testing
	// replay: Echo: Summarize snapshot testing
}

// A streamed call is recorded as it streams and replayed as a stream.
func ExampleTransport_stream() {
	api, _ := fakeupstream.Start(fakeupstream.Options{})
	dir, _ := os.MkdirTemp("", "ai-snapshots")
	defer os.RemoveAll(dir)

	for _, mode := range []traceforge.Mode{traceforge.Record, traceforge.Replay} {
		tr, err := traceforge.NewTransport(traceforge.Options{Mode: mode, Dir: dir})
		if err != nil {
			fmt.Println(err)
			return
		}
		cfg := openai.DefaultConfig("test-key")
		cfg.BaseURL = api.URL + "/v1"
		cfg.HTTPClient = tr.Client()
		client := openai.NewClientWithConfig(cfg)

		stream, err := client.CreateChatCompletionStream(context.Background(), chatRequest("Write a tagline for traceforge"))
		if err != nil {
			fmt.Println(err)
			return
		}
		var text strings.Builder
		for {
			chunk, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				fmt.Println(err)
				break
			}
			if len(chunk.Choices) > 0 {
				text.WriteString(chunk.Choices[0].Delta.Content)
			}
		}
		stream.Close()
		if err := tr.Close(); err != nil {
			fmt.Println(err)
		}
		fmt.Printf("%s: %s\n", mode, text.String())
		api.Close()
	}
	// Output:
	// record: Echo: Write a tagline for traceforge
	// replay: Echo: Write a tagline for traceforge
}

// A request that changed since it was recorded gets a 404 (go-openai
// returns an *openai.APIError), and Close reports the drift with a diff
// against the closest snapshot.
func ExampleTransport_drift() {
	api, _ := fakeupstream.Start(fakeupstream.Options{})
	defer api.Close()
	dir, _ := os.MkdirTemp("", "ai-snapshots")
	defer os.RemoveAll(dir)

	rec, _ := traceforge.NewTransport(traceforge.Options{Mode: traceforge.Record, Dir: dir})
	_, _ = ask(rec, api.URL+"/v1", "Summarize snapshot testing")
	_ = rec.Close()

	tr, _ := traceforge.NewTransport(traceforge.Options{Mode: traceforge.Replay, Dir: dir})
	_, err := ask(tr, api.URL+"/v1", "Summarize drift testing")
	var apiErr *openai.APIError
	if errors.As(err, &apiErr) {
		fmt.Println("status:", apiErr.HTTPStatusCode)
	}
	err = tr.Close()
	fmt.Println("drift:", errors.Is(err, traceforge.ErrDrift))
	for _, line := range strings.Split(err.Error(), "\n") {
		line = strings.TrimSpace(line)
		if (strings.HasPrefix(line, "-") || strings.HasPrefix(line, "+")) && !strings.HasPrefix(line, "---") && !strings.HasPrefix(line, "+++") {
			fmt.Println(line[:1], strings.TrimSpace(line[1:]))
		}
	}
	// Output:
	// status: 404
	// drift: true
	// - "content": "Summarize snapshot testing",
	// + "content": "Summarize drift testing",
}
