package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/traceforge/traceforge/internal/cli"
	"github.com/traceforge/traceforge/internal/fakeupstream"
	"github.com/traceforge/traceforge/internal/snapshottest"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"traceforge": func() { os.Exit(cli.Main(os.Args[1:], cli.System())) },
		"tfclient":   tfclient,
		"tfreq":      tfreq,
		"tfseq":      tfseq,
	})
}

// TestScripts runs the end-to-end CLI scripts in testdata/script. Extra
// commands:
//
//	exits N PROG ARGS...   run PROG and require exit code N (stdout/stderr kept for later checks)
//	mkset DIR N            write a valid snapshot set of N calls into DIR
//	fixture NAME DIR       copy ../../testdata/NAME/.ai-snapshots to DIR
//	sink                   start a loopback server that counts every connection; $SINK_URL is its URL
//	sink-conns N           require that the sink has accepted exactly N connections
//	fake-upstream [PREFIX] start the deterministic fake upstream; $FAKE_URL is its URL
//	                       (PREFIX is put before every answer: a changed answer)
//
// and the program tfclient (see tfclient below) as the application under test.
func TestScripts(t *testing.T) {
	root, _ := filepath.Abs("../../testdata")
	var sinks sync.Map // *testscript.TestScript → *snapshottest.Sink (scripts run in parallel)
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		UpdateScripts:       os.Getenv("UPDATE_SCRIPTS") != "",
		Setup: func(env *testscript.Env) error {
			env.Setenv("NO_COLOR", "1")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) < 2 {
					ts.Fatalf("usage: exits N PROG ARGS...")
				}
				want, err := strconv.Atoi(args[0])
				if err != nil {
					ts.Fatalf("exits: %v", err)
				}
				err = ts.Exec(args[1], args[2:]...)
				got := 0
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					got = ee.ExitCode()
				} else if err != nil {
					ts.Fatalf("exits: %v", err)
				}
				if (got == want) == neg {
					ts.Fatalf("exit code %d, want %d", got, want)
				}
			},
			"mkset": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 2 {
					ts.Fatalf("usage: mkset DIR N")
				}
				n, _ := strconv.Atoi(args[1])
				if _, err := snapshottest.WriteSet(ts.MkAbs(args[0]), snapshottest.Many(n)...); err != nil {
					ts.Fatalf("mkset: %v", err)
				}
			},
			"fake-upstream": func(ts *testscript.TestScript, neg bool, args []string) {
				var o fakeupstream.Options
				if len(args) > 0 {
					o.ContentPrefix = args[0]
				}
				srv, err := fakeupstream.Start(o)
				ts.Check(err)
				ts.Setenv("FAKE_URL", srv.URL)
				ts.Defer(srv.Close)
			},
			"sink": func(ts *testscript.TestScript, neg bool, args []string) {
				s := snapshottest.StartSink()
				ts.Setenv("SINK_URL", s.URL)
				ts.Defer(s.Close)
				sinks.Store(ts, s)
			},
			"sink-conns": func(ts *testscript.TestScript, neg bool, args []string) {
				v, ok := sinks.Load(ts)
				if len(args) != 1 || !ok {
					ts.Fatalf("usage: sink-conns N (after sink)")
				}
				want, _ := strconv.Atoi(args[0])
				if got := v.(*snapshottest.Sink).Conns(); (got == want) == neg {
					ts.Fatalf("the sink got %d connection(s), want %d", got, want)
				}
			},
			"fixture": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 2 {
					ts.Fatalf("usage: fixture NAME DIR")
				}
				src := filepath.Join(root, args[0], ".ai-snapshots")
				if _, err := os.Stat(src); err != nil {
					// Legacy fixtures hold a 0.9.0 snapshots.json directly.
					data, err := os.ReadFile(filepath.Join(root, args[0], "snapshots.json"))
					ts.Check(err)
					ts.Check(os.MkdirAll(ts.MkAbs(args[1]), 0o755))
					ts.Check(os.WriteFile(filepath.Join(ts.MkAbs(args[1]), "snapshots.json"), data, 0o644))
					return
				}
				ts.Check(os.CopyFS(ts.MkAbs(args[1]), os.DirFS(src)))
			},
		},
	})
}

// tfclient is a tiny application for the scripts: for each argument it sends
// one OpenAI chat call (temperature 0, seed 42) to $OPENAI_BASE_URL with the
// source header tfclient.go:<n>:ask, and prints the answer. TFCLIENT_STREAM=1
// streams the calls; TFCLIENT_DEFAULT=1 sends neither temperature, seed nor
// max tokens (an SDK's default call); TFCLIENT_BYPASS=URL then GETs URL past the base URL. It exits 1 on any non-2xx answer, printing the error body.
func tfclient() {
	base := os.Getenv("OPENAI_BASE_URL")
	for i, prompt := range os.Args[1:] {
		body := map[string]any{
			"model": "gpt-4o-mini", "temperature": 0, "seed": 42, "max_tokens": 50,
			"messages": []any{map[string]any{"role": "user", "content": prompt}},
		}
		if os.Getenv("TFCLIENT_DEFAULT") == "1" {
			// An SDK's default call: no temperature, no seed, no max tokens.
			delete(body, "temperature")
			delete(body, "seed")
			delete(body, "max_tokens")
		}
		if os.Getenv("TFCLIENT_STREAM") == "1" {
			body["stream"] = true
		}
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest("POST", base+"/chat/completions", bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+os.Getenv("OPENAI_API_KEY"))
		req.Header.Set("X-Traceforge-Source", fmt.Sprintf("tfclient.go:%d:ask", i+1))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			fmt.Fprintln(os.Stderr, "tfclient:", err)
			os.Exit(1)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			fmt.Fprintf(os.Stderr, "tfclient: %d %s\n", resp.StatusCode, data)
			os.Exit(1)
		}
		if os.Getenv("TFCLIENT_STREAM") == "1" {
			fmt.Printf("stream %d bytes, snapshot %s\n", len(data), resp.Header.Get("X-Traceforge-Snapshot-Id"))
			continue
		}
		var out struct {
			Choices []struct {
				Message struct{ Content string } `json:"message"`
			} `json:"choices"`
		}
		_ = json.Unmarshal(data, &out)
		fmt.Printf("%s -> %s\n", prompt, out.Choices[0].Message.Content)
	}
	// TFCLIENT_BYPASS=URL: one more call that ignores the base URL, made
	// with the default client, which honours HTTP(S)_PROXY and NO_PROXY
	// (http.ProxyFromEnvironment): an SDK escaping the base URL.
	if u := os.Getenv("TFCLIENT_BYPASS"); u != "" {
		resp, err := http.DefaultClient.Get(u)
		if err != nil {
			fmt.Fprintln(os.Stderr, "tfclient: bypass:", err)
			os.Exit(1)
		}
		resp.Body.Close()
		fmt.Printf("bypass %s -> %d\n", u, resp.StatusCode)
	}
	if code := os.Getenv("TFCLIENT_EXIT"); code != "" {
		n, _ := strconv.Atoi(code)
		os.Exit(n)
	}
}

// tfreq sends one request, METHOD PATH [NAME=VALUE header...], to
// $TRACEFORGE_URL with a JSON body and prints "STATUS BODY". A header value
// env:NAME is read from the variable NAME.
func tfreq() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: tfreq METHOD PATH [NAME=VALUE...] (body: $TFREQ_BODY)")
		os.Exit(2)
	}
	body := os.Getenv("TFREQ_BODY") // else a body every route can parse
	if body == "" {
		body = `{"messages":[{"role":"user","content":[{"text":"hi"}]}]}`
	}
	req, err := http.NewRequest(os.Args[1], os.Getenv("TRACEFORGE_URL")+os.Args[2], strings.NewReader(body))
	if err != nil {
		fmt.Fprintln(os.Stderr, "tfreq:", err)
		os.Exit(1)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Traceforge-Source", "tfreq.go:1:main")
	for _, h := range os.Args[3:] {
		k, v, _ := strings.Cut(h, "=")
		if name, ok := strings.CutPrefix(v, "env:"); ok {
			v = os.Getenv(name) // kept off the command line, which record echoes
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tfreq:", err)
		os.Exit(1)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	fmt.Printf("%d %s\n", resp.StatusCode, bytes.TrimSpace(data))
}
