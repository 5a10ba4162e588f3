package verify

import (
	"reflect"
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/check"
	"github.com/traceforge/traceforge/internal/snapshottest"
)

// A static-only verification (Slim, the lean set) reports what a full one
// does, the policy exceptions included (they name the model).
func TestStaticSlimReportsLikeFull(t *testing.T) {
	dir := t.TempDir()
	ex := snapshottest.OpenAIChat("policy")
	ex.Request["model"] = "o3-mini"
	ex.Request["temperature"] = 1
	if _, err := snapshottest.WriteSet(dir, append(snapshottest.Many(3), ex)...); err != nil {
		t.Fatal(err)
	}
	cfg := &check.Config{Exceptions: []check.Exception{{Model: "o3*", Relax: []string{"temperature", "seed"}}}}
	full, _, err := Static(StaticOptions{Dir: dir, Display: ".ai-snapshots", Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	slim, _, err := Static(StaticOptions{Dir: dir, Display: ".ai-snapshots", Config: cfg, Slim: true})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(full, slim) {
		t.Fatalf("reports differ:\nfull %+v\nslim %+v", full, slim)
	}
	if len(slim.Exception) != 1 || !strings.Contains(slim.Exception[0], `model "o3-mini" matches "o3*"`) {
		t.Errorf("exception line: %q", slim.Exception)
	}
}
