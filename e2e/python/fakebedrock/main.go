// Command fakebedrock serves internal/fakeupstream's fake Amazon Bedrock
// runtime for the Python end-to-end suite (e2e/python): tf-fake-upstream
// does not serve Bedrock, and the Go suite starts the fake in process
// (fakeupstream.StartBedrock), which pytest cannot. The harness builds it
// with `go build ./python/fakebedrock` from e2e/.
//
//	fakebedrock -access-key-id ID -secret-access-key SECRET [-region R]
//
// Only SigV4 signatures made with ID and SECRET (and, when given, for R) are
// accepted. It prints FAKE_BEDROCK_URL=http://127.0.0.1:PORT as its first
// stdout line and serves until SIGINT or SIGTERM. GET /__stats answers the
// fake's counters as JSON, {"requests": N, "signed": N, "bearer": N}, and is
// not counted itself; the same line goes to stderr when it stops.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/traceforge/traceforge/internal/fakeupstream"
)

func main() {
	var o fakeupstream.BedrockOptions
	flag.StringVar(&o.AccessKeyID, "access-key-id", "", "the only access key id whose signatures are accepted (required)")
	flag.StringVar(&o.SecretAccessKey, "secret-access-key", "", "its secret (required)")
	flag.StringVar(&o.Region, "region", "", "the only region accepted in the credential scope (default: any)")
	flag.Parse()
	if o.AccessKeyID == "" || o.SecretAccessKey == "" || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	fake := fakeupstream.NewBedrock(o)
	stats := func() []byte {
		b, _ := json.Marshal(map[string]int64{"requests": fake.Requests(), "signed": fake.Signed(), "bearer": fake.Bearer()})
		return b
	}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/__stats" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(stats())
			return
		}
		fake.ServeHTTP(w, r)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintf(os.Stderr, "fakebedrock: %v\n", err)
		os.Exit(2)
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 30 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	fmt.Printf("FAKE_BEDROCK_URL=http://%s\n", ln.Addr())
	_ = os.Stdout.Sync()

	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	fmt.Fprintf(os.Stderr, "fakebedrock: stopped: %s\n", stats())
}
