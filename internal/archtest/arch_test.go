// Package archtest holds the tests that keep the layout of the code what
// docs/architecture.md says it is: which package may import which, what
// replay may keep, and how long a production file may grow. It has no
// code of its own.
package archtest

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/check"
)

const module = "github.com/traceforge/traceforge"

// root is the module's root folder (two levels above this package).
func root(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatalf("module root: %v", err)
	}
	return dir
}

// skipDir reports whether a folder holds no production Go code of the
// module: hidden folders, testdata, node_modules.
func skipDir(name string) bool {
	return name != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules")
}

// productionFiles lists the module's non-test Go files, relative to root.
func productionFiles(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && skipDir(d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
			rel, _ := filepath.Rel(root, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	return files
}

// imports maps each package of the module (its import path) to the module
// packages its production files import.
func imports(t *testing.T, root string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	fset := token.NewFileSet()
	for _, rel := range productionFiles(t, root) {
		f, err := parser.ParseFile(fset, filepath.Join(root, filepath.FromSlash(rel)), nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		pkg := module
		if dir := filepath.ToSlash(filepath.Dir(rel)); dir != "." {
			pkg += "/" + dir
		}
		if _, ok := out[pkg]; !ok {
			out[pkg] = nil
		}
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if p == module || strings.HasPrefix(p, module+"/") {
				out[pkg] = append(out[pkg], p)
			}
		}
	}
	return out
}

// deps returns every module package pkg imports, directly or not, each
// with the chain of imports that leads to it.
func deps(graph map[string][]string, pkg string) map[string][]string {
	seen := map[string][]string{}
	var walk func(p string, path []string)
	walk = func(p string, path []string) {
		for _, q := range graph[p] {
			if _, ok := seen[q]; ok {
				continue
			}
			chain := append(append([]string{}, path...), q)
			seen[q] = chain
			walk(q, chain)
		}
	}
	walk(pkg, []string{pkg})
	return seen
}

// TestLayers: the imports docs/architecture.md rules out. render only
// formats the result values (internal/result): it knows neither the checks
// nor the ledger; record knows nothing of replay (the CLI and the Go
// transport compose record --only-missing from replay.Responder); result
// is data every layer may use, above nothing but finding and change.
func TestLayers(t *testing.T) {
	graph := imports(t, root(t))
	in := func(name string) string { return module + "/internal/" + name }
	for _, rule := range []struct {
		pkg       string
		forbidden []string
	}{
		{in("render"), []string{in("check"), in("ledger"), in("verify"), in("record"), in("migrate"), in("replay")}},
		{in("record"), []string{in("replay"), in("verify")}},
		{in("result"), []string{in("check"), in("ledger"), in("render"), in("record"), in("verify"), in("migrate"), in("replay")}},
		{in("secret"), []string{in("check"), in("render"), in("provider")}},
		{in("replay"), []string{in("record"), in("verify"), in("render"), in("result")}},
	} {
		if _, ok := graph[rule.pkg]; !ok {
			t.Errorf("package %s not found", rule.pkg)
			continue
		}
		all := deps(graph, rule.pkg)
		for _, f := range rule.forbidden {
			if chain, ok := all[f]; ok {
				t.Errorf("%s imports %s: %s", strings.TrimPrefix(rule.pkg, module+"/"), strings.TrimPrefix(f, module+"/"), strings.Join(chain, " → "))
			}
		}
	}
}

// maxLines is the longest a production Go file may be.
const maxLines = 700

// TestNoLongFiles: no production Go file is longer than maxLines lines;
// split by concept (one file per type or per output format) before that.
func TestNoLongFiles(t *testing.T) {
	dir := root(t)
	for _, rel := range productionFiles(t, dir) {
		f, err := os.Open(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
		for sc.Scan() {
			n++
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		if n > maxLines {
			t.Errorf("%s has %d lines; a production file has at most %d: split it by concept", rel, n, maxLines)
		}
	}
}

// TestSnapshotCarriesNoOpaqueState: check.Snapshot has no interface-typed
// field (anything, in other words), so no other package can smuggle its
// own state through it — replay keeps what it needs in its Entries.
func TestSnapshotCarriesNoOpaqueState(t *testing.T) {
	typ := reflect.TypeOf(check.Snapshot{})
	for i := range typ.NumField() {
		if f := typ.Field(i); f.Type.Kind() == reflect.Interface {
			t.Errorf("check.Snapshot.%s is %s: state of another package belongs in that package", f.Name, f.Type)
		}
	}
}

// replayGlobals are the package-level variables replay may have: constant
// header values and a pool of hashers, none of them a cache of a set's data.
var replayGlobals = map[string]bool{"headerTrue": true, "headerJSON": true, "headerNoCache": true, "digests": true}

// TestReplayKeepsNoGlobalState: replay's package-level variables are only
// replayGlobals; what it keeps of a set lives in an Entries or an Index
// its caller owns.
func TestReplayKeepsNoGlobalState(t *testing.T) {
	dir := root(t)
	fset := token.NewFileSet()
	for _, rel := range productionFiles(t, dir) {
		if path.Dir(rel) != "internal/replay" {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, filepath.FromSlash(rel)), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, spec := range g.Specs {
				for _, id := range spec.(*ast.ValueSpec).Names {
					if !replayGlobals[id.Name] {
						t.Errorf("%s: package-level variable %s: keep it in the Entries or Index that serves the set", rel, id.Name)
					}
				}
			}
		}
	}
}
