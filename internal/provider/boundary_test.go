package provider_test

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// providerLiteral matches a line that names a provider or one of its wire
// details: a provider's name as a word (openai, Anthropic, …, in any case,
// including env variables such as OPENAI_BASE_URL), a credential or version
// header, or an API version path.
var providerLiteral = regexp.MustCompile(`(?i)(^|[^a-z0-9])(openai|anthropic|gemini|ollama|bedrock|vertex|azure)([^a-z0-9]|$)|x-api-key|x-goog-api-key|"/v1(beta|alpha)?[/"]`)

// boundaryExempt are the trees outside internal/provider that may name
// providers: the fake upstream is a fake of the providers' wire (a test
// fixture the demo also uses), snapshottest builds sets for tests and
// benchmarks, and benchmarks, examples, end-to-end clients and tools are
// not traceforge's code paths.
var boundaryExempt = []string{"internal/provider/", "internal/fakeupstream/", "internal/snapshottest/", "cmd/tf-fake-upstream/", "bench/", "e2e/", "examples/", "tools/", "helpers/", "packaging/"}

// maxProviderLines is DESIGN §13.1's bar: at most 5 non-comment, non-test
// lines outside internal/provider name a provider or a wire detail.
const maxProviderLines = 5

// TestProviderLiteralsStayInProvider fails when a provider's name or wire
// detail creeps back outside internal/provider (docs/architecture.md,
// "Adding a provider"): every such line is listed.
func TestProviderLiteralsStayInProvider(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	var hits []string
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(path, root+string(filepath.Separator)))
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			for _, ex := range boundaryExempt {
				if rel+"/" == ex {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		hits = append(hits, literalLines(t, path, rel)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) > maxProviderLines {
		t.Errorf("%d non-comment lines outside internal/provider name a provider or a wire detail (at most %d); move them into the provider's descriptor:\n%s",
			len(hits), maxProviderLines, strings.Join(hits, "\n"))
	}
}

// literalLines lists the lines of one Go file that match providerLiteral,
// skipping comments, import blocks and struct tags' JSON names.
func literalLines(t *testing.T, path, rel string) []string {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n, inImport, inBlockComment := 0, false, false
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		switch {
		case inBlockComment:
			if strings.Contains(line, "*/") {
				inBlockComment = false
			}
			continue
		case strings.HasPrefix(line, "/*"):
			inBlockComment = !strings.Contains(line, "*/")
			continue
		case strings.HasPrefix(line, "//"):
			continue
		case line == "import (":
			inImport = true
			continue
		case inImport:
			if line == ")" {
				inImport = false
			}
			continue
		case strings.HasPrefix(line, "import "):
			continue
		}
		if i := strings.Index(line, " //"); i >= 0 {
			line = line[:i]
		}
		if providerLiteral.MatchString(line) {
			out = append(out, rel+":"+strconv.Itoa(n)+": "+line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
