package traceforge_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/traceforge/traceforge"
)

// Wrap the HTTP client an LLM SDK uses, and every request names the line of
// the application that made it. The test server here echoes the header the
// recording proxy would read.
func ExampleSourceTransport() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, r.Header.Get(traceforge.SourceHeader))
	}))
	defer srv.Close()

	client := &http.Client{Transport: &traceforge.SourceTransport{}}
	// With an SDK: openai.NewClient(option.WithHTTPClient(client)), or
	// cfg.HTTPClient = client for go-openai.
	resp, err := client.Get(srv.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	header, _ := io.ReadAll(resp.Body)
	fmt.Println(string(header))
	// Output: example_source_test.go:24:ExampleSourceTransport
}

func ExampleNewHTTPClient() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, r.Header.Get(traceforge.SourceHeader))
	}))
	defer srv.Close()

	client := traceforge.NewHTTPClient(nil)
	resp, err := client.Post(srv.URL, "application/json", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	header, _ := io.ReadAll(resp.Body)
	fmt.Println(string(header))
	// Output: example_source_test.go:42:ExampleNewHTTPClient
}
