package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
)

// tfseq is an application that makes a sequence of provider calls, the
// lines of the file it is given: "METHOD PATH [BODY]", PATH relative to
// $TRACEFORGE_URL, $ID standing for the "id" of the last answer that had
// one (a background response, then its polls). Each call carries the
// source tfseq.txt:<line>:main and the provider keys of the environment
// (anthropic-version on Anthropic's routes); for each it prints "STATUS
// WHAT", WHAT being the answer's "status" member when it has one, else
// its body. Any transport error exits 1.
func tfseq() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: tfseq FILE")
		os.Exit(2)
	}
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "tfseq:", err)
		os.Exit(1)
	}
	defer f.Close()
	id := ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.SplitN(line, " ", 3)
		method, path, body := parts[0], strings.ReplaceAll(parts[1], "$ID", id), ""
		if len(parts) == 3 {
			body = parts[2]
		}
		req, err := http.NewRequest(method, os.Getenv("TRACEFORGE_URL")+path, strings.NewReader(body))
		if err != nil {
			fmt.Fprintln(os.Stderr, "tfseq:", err)
			os.Exit(1)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Set("X-Traceforge-Source", fmt.Sprintf("tfseq.txt:%d:main", n))
		if strings.Contains(path, "/messages") {
			req.Header.Set("x-api-key", os.Getenv("ANTHROPIC_API_KEY"))
			req.Header.Set("anthropic-version", "2023-06-01")
		} else if strings.Contains(path, ":countTokens") || strings.Contains(path, "/v1beta/") {
			req.Header.Set("x-goog-api-key", os.Getenv("GEMINI_API_KEY"))
		} else {
			req.Header.Set("Authorization", "Bearer "+os.Getenv("OPENAI_API_KEY"))
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			fmt.Fprintln(os.Stderr, "tfseq:", err)
			os.Exit(1)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		what := string(bytes.Join(bytes.Fields(data), []byte(" ")))
		var m map[string]any
		if json.Unmarshal(data, &m) == nil {
			if s, ok := m["id"].(string); ok {
				id = s
			}
			if s, ok := m["status"].(string); ok {
				what = s
			}
		}
		fmt.Printf("%d %s\n", resp.StatusCode, what)
	}
}
