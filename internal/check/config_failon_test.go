package check

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/traceforge/traceforge/internal/change"
)

func TestParseConfigFailOn(t *testing.T) {
	cfg, err := ParseConfig([]byte(`{"fail_on": ["finish", "tool-calls"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := []change.Class{change.Finish, change.ToolCalls}; !reflect.DeepEqual(cfg.FailClasses(), want) {
		t.Errorf("FailClasses = %v, want %v", cfg.FailClasses(), want)
	}
	// An empty list fails on nothing; no key means the default.
	cfg, err = ParseConfig([]byte(`{"fail_on": []}`))
	if err != nil || cfg.FailClasses() == nil || len(cfg.FailClasses()) != 0 {
		t.Errorf("empty fail_on: %v %v", cfg.FailClasses(), err)
	}
	cfg, err = ParseConfig([]byte(`{}`))
	if err != nil || !reflect.DeepEqual(cfg.FailClasses(), change.DefaultFailOn()) {
		t.Errorf("default fail_on: %v %v", cfg.FailClasses(), err)
	}
	if !reflect.DeepEqual((*Config)(nil).FailClasses(), []change.Class{change.ToolCalls, change.Structure, change.Finish, change.Text}) {
		t.Error("nil config: default is every class but whitespace")
	}
	for bad, msg := range map[string]string{
		`{"fail_on": ["text", "model"]}`: `/fail_on/1: "model" is not a change class (allowed: tool-calls, structure, finish, text, whitespace)`,
		`{"fail_on": "text"}`:            `/fail_on must be an array of change classes`,
		`{"fail_on": [1]}`:               `/fail_on/0: "" is not a change class`,
	} {
		_, err := ParseConfig([]byte(bad))
		if err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseConfig(%s) = %v, want %q", bad, err, msg)
		}
	}
}

// An unknown class is a configuration error that names the file.
func TestLoadConfigFailOnUnknownClass(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ConfigName), []byte(`{"fail_on": ["latency"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadConfig(dir)
	if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), ConfigName) || !strings.Contains(err.Error(), `"latency" is not a change class`) {
		t.Errorf("err = %v", err)
	}
}
