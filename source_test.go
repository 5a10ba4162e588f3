package traceforge

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/traceforge/traceforge/internal/source"
)

// echoServer answers every request with the X-Traceforge-Source header it got
// ("<none>" when there was none).
func echoServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, ok := r.Header[http.CanonicalHeaderKey(SourceHeader)]
		if !ok {
			io.WriteString(w, "<none>")
			return
		}
		io.WriteString(w, strings.Join(v, "|"))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func readBody(t *testing.T, resp *http.Response, err error) string {
	t.Helper()
	if err != nil {
		t.Fatalf("request: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return string(b)
}

// markerLine returns the line of this file that ends with the comment
// "// mark:<name>".
func markerLine(t *testing.T, name string) int {
	t.Helper()
	fh, err := os.Open("source_test.go")
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for n := 1; sc.Scan(); n++ {
		if strings.HasSuffix(sc.Text(), "// mark:"+name) {
			return n
		}
	}
	t.Fatalf("no line marked %q in source_test.go", name)
	return 0
}

func TestSourceTransportNamesTestFunction(t *testing.T) {
	srv := echoServer(t)
	c := &http.Client{Transport: &SourceTransport{}}
	resp, err := c.Get(srv.URL) // mark:test-function
	got := readBody(t, resp, err)
	want := fmt.Sprintf("source_test.go:%d:TestSourceTransportNamesTestFunction", markerLine(t, "test-function"))
	if got != want {
		t.Fatalf("header = %q, want %q", got, want)
	}
}

type agent struct{ c *http.Client }

func (a *agent) run(url string) (*http.Response, error) {
	return a.c.Get(url) // mark:pointer-method
}

type valueAgent struct{ c *http.Client }

func (a valueAgent) run(url string) (*http.Response, error) {
	return a.c.Get(url) // mark:value-method
}

func TestSourceTransportFunctionNames(t *testing.T) {
	srv := echoServer(t)
	c := &http.Client{Transport: &SourceTransport{}}

	resp, err := (&agent{c}).run(srv.URL)
	if got, want := readBody(t, resp, err), fmt.Sprintf("source_test.go:%d:agent.run", markerLine(t, "pointer-method")); got != want {
		t.Errorf("pointer receiver: header = %q, want %q", got, want)
	}

	resp, err = valueAgent{c}.run(srv.URL)
	if got, want := readBody(t, resp, err), fmt.Sprintf("source_test.go:%d:valueAgent.run", markerLine(t, "value-method")); got != want {
		t.Errorf("value receiver: header = %q, want %q", got, want)
	}

	get := func() (*http.Response, error) {
		return c.Get(srv.URL) // mark:closure
	}
	resp, err = get()
	if got, want := readBody(t, resp, err), fmt.Sprintf("source_test.go:%d:TestSourceTransportFunctionNames.func1", markerLine(t, "closure")); got != want {
		t.Errorf("closure: header = %q, want %q", got, want)
	}
}

func TestSourceTransportThroughNewRequest(t *testing.T) {
	srv := echoServer(t)
	c := NewHTTPClient(nil)
	req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(`{"model":"m"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req) // mark:do
	got := readBody(t, resp, err)
	if want := fmt.Sprintf("source_test.go:%d:TestSourceTransportThroughNewRequest", markerLine(t, "do")); got != want {
		t.Fatalf("header = %q, want %q", got, want)
	}
	if v := req.Header.Get(SourceHeader); v != "" {
		t.Fatalf("RoundTrip modified the caller's request: header %q", v)
	}
}

func TestSourceTransportKeepsExplicitHeader(t *testing.T) {
	srv := echoServer(t)
	c := &http.Client{Transport: &SourceTransport{}}
	req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(SourceHeader, "src/app.py:12:summarize")
	resp, err := c.Do(req)
	if got := readBody(t, resp, err); got != "src/app.py:12:summarize" {
		t.Fatalf("header = %q, want the caller's own value", got)
	}
}

func TestSourceTransportOutsideRootSendsNoHeader(t *testing.T) {
	srv := echoServer(t)
	c := &http.Client{Transport: &SourceTransport{Root: t.TempDir()}}
	resp, err := c.Get(srv.URL)
	if got := readBody(t, resp, err); got != "<none>" {
		t.Fatalf("header = %q, want none for a caller outside Root", got)
	}
}

func TestSourceTransportSkipPackages(t *testing.T) {
	srv := echoServer(t)
	// Skipping this package leaves only testing and runtime frames: no source.
	c := &http.Client{Transport: &SourceTransport{SkipPackages: []string{modulePath + "/"}}}
	resp, err := c.Get(srv.URL)
	if got := readBody(t, resp, err); got != "<none>" {
		t.Fatalf("header = %q, want none when every candidate frame is skipped", got)
	}
}

func TestSourceTransportExplicitRoot(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	parent := filepath.Dir(wd)
	srv := echoServer(t)

	c := &http.Client{Transport: &SourceTransport{Root: parent}}
	resp, err := c.Get(srv.URL) // mark:explicit-root
	want := fmt.Sprintf("%s/source_test.go:%d:TestSourceTransportExplicitRoot", source.Escape(filepath.Base(wd)), markerLine(t, "explicit-root"))
	if got := readBody(t, resp, err); got != want {
		t.Fatalf("header = %q, want %q", got, want)
	}

	// A root reached through a symbolic link names the same files.
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(wd, link); err != nil {
		t.Fatal(err)
	}
	c = &http.Client{Transport: &SourceTransport{Root: link}}
	resp, err = c.Get(srv.URL) // mark:symlink-root
	want = fmt.Sprintf("source_test.go:%d:TestSourceTransportExplicitRoot", markerLine(t, "symlink-root"))
	if got := readBody(t, resp, err); got != want {
		t.Fatalf("through a symlinked root: header = %q, want %q", got, want)
	}
}

func TestSourceTransportUsesBase(t *testing.T) {
	var seen string
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		seen = r.Header.Get(SourceHeader)
		return &http.Response{StatusCode: 204, Body: http.NoBody, Request: r}, nil
	})
	c := &http.Client{Transport: &SourceTransport{Base: base}}
	resp, err := c.Get("http://example.invalid/") // mark:base
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if want := fmt.Sprintf("source_test.go:%d:TestSourceTransportUsesBase", markerLine(t, "base")); seen != want {
		t.Fatalf("base saw header %q, want %q", seen, want)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestNewHTTPClient(t *testing.T) {
	base := roundTripFunc(func(r *http.Request) (*http.Response, error) { return nil, io.EOF })
	orig := &http.Client{Transport: base, Timeout: 3 * time.Second}
	c := NewHTTPClient(orig)
	if c == orig {
		t.Fatal("NewHTTPClient returned its argument, want a copy")
	}
	if c.Timeout != 3*time.Second {
		t.Fatalf("Timeout = %v, want it copied", c.Timeout)
	}
	st, ok := c.Transport.(*SourceTransport)
	if !ok {
		t.Fatalf("Transport = %T, want *SourceTransport", c.Transport)
	}
	if _, ok := st.Base.(roundTripFunc); !ok {
		t.Fatalf("Base = %T, want the original transport", st.Base)
	}
	if orig.Transport == nil || orig.Transport == http.RoundTripper(st) {
		t.Fatal("NewHTTPClient changed its argument")
	}
	if again := NewHTTPClient(c); again.Transport != c.Transport {
		t.Fatal("NewHTTPClient wrapped a SourceTransport twice")
	}
	if d := NewHTTPClient(nil); d.Transport.(*SourceTransport).Base != nil {
		t.Fatal("NewHTTPClient(nil) should wrap the default transport (nil Base)")
	}
}

func TestPackagePathAndFuncName(t *testing.T) {
	cases := []struct{ fn, pkg, name string }{
		{"main.summarize", "main", "summarize"},
		{"main.(*Agent).Run", "main", "Agent.Run"},
		{"main.Agent.Run", "main", "Agent.Run"},
		{"main.(*Agent[...]).Run.func1", "main", "Agent[...].Run.func1"},
		{"main.main.func2.1", "main", "main.func2.1"},
		{"main.Map[...]", "main", "Map[...]"},
		{"net/http.(*Client).do", "net/http", "Client.do"},
		{"runtime.goexit", "runtime", "goexit"},
		{"github.com/traceforge/traceforge.(*SourceTransport).RoundTrip", "github.com/traceforge/traceforge", "SourceTransport.RoundTrip"},
		{"github.com/traceforge/traceforge_test.ExampleSourceTransport", "github.com/traceforge/traceforge_test", "ExampleSourceTransport"},
		{"gopkg.in/yaml%2ev3.Unmarshal", "gopkg.in/yaml.v3", "Unmarshal"},
		{"github.com/openai/openai-go/v3/option.WithHTTPClient.func1", "github.com/openai/openai-go/v3/option", "WithHTTPClient.func1"},
	}
	for _, tc := range cases {
		if got := packagePath(tc.fn); got != tc.pkg {
			t.Errorf("packagePath(%q) = %q, want %q", tc.fn, got, tc.pkg)
		}
		if got := funcName(tc.fn); got != tc.name {
			t.Errorf("funcName(%q) = %q, want %q", tc.fn, got, tc.name)
		}
	}
}

func TestSkip(t *testing.T) {
	tr := &SourceTransport{SkipPackages: []string{"github.com/acme/llmwrap"}}
	cases := []struct {
		fn, file string
		want     bool
	}{
		{"net/http.send", "/usr/local/go/src/net/http/client.go", true},
		{"net/http.send", "net/http/client.go", true}, // -trimpath
		{"runtime.main", "/opt/go/src/runtime/proc.go", true},
		{"vendor/golang.org/x/net/http2/hpack.(*Encoder).WriteField", "/usr/lib/go/src/vendor/golang.org/x/net/http2/hpack/encode.go", true},
		{"github.com/openai/openai-go/v3.(*ChatCompletionService).New", "/m/github.com/openai/openai-go/v3@v3.9.0/chat.go", true},
		{"github.com/sashabaranov/go-openai.(*Client).CreateChatCompletion", "/m/x.go", true},
		{"github.com/anthropics/anthropic-sdk-go/v2/internal/requestconfig.(*RequestConfig).Execute", "/m/x.go", true},
		{"github.com/acme/llmwrap/chat.Send", "/m/x.go", true},
		{"google.golang.org/genai.Models.generateContentStream", "/m/google.golang.org/genai@v1.77.0/models.go", true},
		{"github.com/ollama/ollama/api.(*Client).Chat", "/m/x.go", true},
		// genai's stream iterator inlined into the application's frame: the
		// caller's name, the SDK's file (module cache or vendor folder).
		{"main.stream.Models.GenerateContentStream.func2", "/root/go/pkg/mod/google.golang.org/genai@v1.77.0/models.go", true},
		{"main.stream.Models.GenerateContentStream.func2", "/w/app/vendor/google.golang.org/genai/models.go", true},
		{"main.stream", "/w/app/main.go", false},
		{"github.com/traceforge/traceforge.(*SourceTransport).RoundTrip", "/w/source.go", true},
		{"github.com/traceforge/traceforge/internal/record.(*Proxy).x", "/w/internal/record/p.go", true},
		{"github.com/traceforge/traceforge.TestX", "/w/source_test.go", false},
		{"github.com/traceforge/traceforge_test.ExampleSourceTransport", "/w/example_source_test.go", false},
		{"github.com/acme/llmwrapper.Send", "/m/x.go", false},
		{"github.com/openai/openai-go-extra.Send", "/m/x.go", false},
		{"main.main", "/home/u/app/main.go", false},
		{"myapp/internal/llm.Summarize", "/home/u/myapp/internal/llm/llm.go", false},
		{"github.com/traceforge/traceforge/e2e.TestE2E", "/w/e2e/e2e_test.go", false},
		{"github.com/traceforge/traceforge/internal/record.TestX", "/w/internal/record/record_test.go", false},
		{"github.com/traceforge/traceforge/internal/fakeupstream.(*Handler).ServeHTTP", "/w/internal/fakeupstream/handler.go", true},
		// The module's other packages are applications like any other.
		{"github.com/traceforge/traceforge/examples/demo.summarize", "/w/examples/demo/main.go", false},
		{"main.summarize", "/w/examples/demo/main.go", false},
		{"github.com/traceforge/traceforge/e2e/clients.Run", "/w/e2e/clients/run.go", false},
		{"github.com/traceforge/traceforge/internalx.Send", "/w/internalx/x.go", false},
	}
	for _, tc := range cases {
		if got := tr.skip(tc.fn, tc.file); got != tc.want {
			t.Errorf("skip(%q, %q) = %v, want %v", tc.fn, tc.file, got, tc.want)
		}
	}
}

func TestRelativeFile(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("// comment\nmodule example.com/app // trailing\n\ngo 1.24\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		file, want string
		ok         bool
	}{
		{filepath.Join(root, "cmd", "app", "main.go"), "cmd/app/main.go", true},
		{filepath.Join(root, "main.go"), "main.go", true},
		{filepath.Join(filepath.Dir(root), "other", "main.go"), "", false},
		{root + "x/main.go", "", false},
		{"example.com/app/cmd/app/main.go", "cmd/app/main.go", true}, // -trimpath
		{"example.com/application/main.go", "", false},
		{"net/http/client.go", "", false},
		{"", "", false},
	}
	for _, tc := range cases {
		got, ok := relativeFile(root, tc.file)
		if got != tc.want || ok != tc.ok {
			t.Errorf("relativeFile(%q) = %q, %v; want %q, %v", tc.file, got, ok, tc.want, tc.ok)
		}
	}
}

func TestModulePathOf(t *testing.T) {
	root := t.TempDir()
	for content, want := range map[string]string{
		"module example.com/app\n":                "example.com/app",
		"module \"example.com/quoted\"\ngo 1.2\n": "example.com/quoted",
		"modules x\n": "",
		"go 1.24\n":   "",
	} {
		if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := modulePathOf(root); got != want {
			t.Errorf("modulePathOf(%q) = %q, want %q", content, got, want)
		}
	}
	if got := modulePathOf(filepath.Join(root, "missing")); got != "" {
		t.Errorf("modulePathOf(no go.mod) = %q, want \"\"", got)
	}
}
