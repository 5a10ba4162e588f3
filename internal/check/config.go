package check

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/traceforge/traceforge/internal/change"
	"github.com/traceforge/traceforge/internal/defaults"
	"github.com/traceforge/traceforge/internal/normalize"
	"github.com/traceforge/traceforge/internal/provider"
	"github.com/traceforge/traceforge/internal/snapshot"
)

// ConfigName is the policy file at the project root (the parent of the snapshot folder).
const ConfigName = ".traceforge.json"

// Exception relaxes the determinism policy for models matching a glob.
type Exception struct {
	Model       string   // glob on request.model ("*" crosses "/", defaults.Glob)
	Relax       []string // "temperature", "seed"
	LiveCompare []string // fields --live compares for these models
	// When lists conditions on the request (as a defaults rule's "when"):
	// the exception applies only when each holds, e.g. Claude with
	// {"/thinking/type": "enabled"}.
	When []defaults.Assign
	glob *defaults.Glob
}

// AllowSecret allows one secret-pattern match: the JSON pointer inside a
// snapshot file plus the SHA-256 of the matched text. Never a pattern.
type AllowSecret struct {
	Pointer string
	SHA256  string
}

// Config is the parsed .traceforge.json.
type Config struct {
	Exceptions   []Exception
	AllowSecrets []AllowSecret
	// FailOn lists the change classes `diff --check` and `verify --live`
	// fail on; nil when the file has no "fail_on" (see FailClasses).
	FailOn []change.Class
	Prices map[string]Price // USD per 1M tokens by model (snapshot stats)
	// Normalize holds the declared key normalizers ("normalize"); nil when
	// the file has none.
	Normalize *normalize.Set
	// Defaults holds the declared request defaults ("defaults", DESIGN
	// §13.2); nil when the file has none.
	Defaults *defaults.Set
	Path     string // where it was read from ("" = no file)
}

// FailClasses returns the configured "fail_on" classes, or the default
// (every class but whitespace) when the config has none.
func (c *Config) FailClasses() []change.Class {
	if c == nil || c.FailOn == nil {
		return change.DefaultFailOn()
	}
	return c.FailOn
}

// Normalizer is the project's declared key normalizers (DESIGN §12.3), nil
// when there are none, so that keys are exactly those of a project without
// a config.
func (c *Config) Normalizer() provider.KeyNormalizer {
	if c == nil || c.Normalize.Len() == 0 {
		return nil
	}
	return c.Normalize
}

// RequestDefaults is the project's declared request defaults (DESIGN
// §13.2), nil when there are none.
func (c *Config) RequestDefaults() provider.RequestDefaults {
	if c == nil || c.Defaults.Len() == 0 {
		return nil
	}
	return c.Defaults
}

// KeyContext is a key context carrying only the declared key normalizers
// and request defaults (nil when there are neither).
func (c *Config) KeyContext() *provider.KeyContext {
	return provider.WithDefaults(provider.WithNormalizer(nil, c.Normalizer()), c.RequestDefaults())
}

// ErrConfig wraps every configuration problem (exit 2).
var ErrConfig = errors.New("invalid configuration")

var relaxable = map[string]bool{"temperature": true, "seed": true}
var liveComparable = map[string]bool{"content": true, "tool_calls": true, "tool_names": true, "finish_reason": true, "tokens_used": true, "model": true}

// LoadConfig reads root/.traceforge.json; a missing file is an empty config.
func LoadConfig(root string) (*Config, error) {
	p := filepath.Join(root, ConfigName)
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return &Config{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrConfig, p, err)
	}
	cfg, err := ParseConfig(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrConfig, p, err)
	}
	cfg.Path = p
	return cfg, nil
}

// ParseConfig parses the policy file strictly: unknown fields are errors.
func ParseConfig(data []byte) (*Config, error) {
	v, err := snapshot.Decode(data)
	if err != nil {
		return nil, err
	}
	top, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("must be a JSON object")
	}
	cfg := &Config{}
	for k, val := range top {
		switch k {
		case "exceptions":
			list, ok := val.([]any)
			if !ok {
				return nil, errors.New("/exceptions must be an array")
			}
			for i, e := range list {
				em, ok := e.(map[string]any)
				if !ok {
					return nil, fmt.Errorf("/exceptions/%d must be an object", i)
				}
				var ex Exception
				for ek, ev := range em {
					switch ek {
					case "model":
						s, ok := ev.(string)
						if !ok || s == "" {
							return nil, fmt.Errorf("/exceptions/%d/model must be a non-empty model name or glob", i)
						}
						g, err := defaults.CompileGlob(s)
						if err != nil {
							return nil, fmt.Errorf("/exceptions/%d/model: %v", i, err)
						}
						ex.Model, ex.glob = s, g
					case "relax", "live_compare":
						arr, ok := ev.([]any)
						if !ok {
							return nil, fmt.Errorf("/exceptions/%d/%s must be an array of strings", i, ek)
						}
						for j, a := range arr {
							s, _ := a.(string)
							allowed := relaxable
							if ek == "live_compare" {
								allowed = liveComparable
							}
							if !allowed[s] {
								return nil, fmt.Errorf("/exceptions/%d/%s/%d: %q is not one of %s", i, ek, j, s, keys(allowed))
							}
							if ek == "relax" {
								ex.Relax = append(ex.Relax, s)
							} else {
								ex.LiveCompare = append(ex.LiveCompare, s)
							}
						}
					case "when":
						if ex.When, err = defaults.ParseWhen(fmt.Sprintf("/exceptions/%d/when", i), ev); err != nil {
							return nil, err
						}
					default:
						return nil, fmt.Errorf("/exceptions/%d: unknown field %q (allowed: model, when, relax, live_compare)", i, ek)
					}
				}
				if ex.Model == "" {
					return nil, fmt.Errorf("/exceptions/%d/model is required", i)
				}
				if len(ex.Relax) == 0 {
					return nil, fmt.Errorf("/exceptions/%d/relax must name what is relaxed (temperature, seed)", i)
				}
				cfg.Exceptions = append(cfg.Exceptions, ex)
			}
		case "allow_secrets":
			list, ok := val.([]any)
			if !ok {
				return nil, errors.New("/allow_secrets must be an array")
			}
			for i, e := range list {
				em, _ := e.(map[string]any)
				ptr, _ := em["pointer"].(string)
				sum, _ := em["sha256"].(string)
				if ptr == "" || len(sum) != 64 || len(em) != 2 {
					return nil, fmt.Errorf("/allow_secrets/%d must be {\"pointer\": \"/snapshots/0/...\", \"sha256\": \"<64 hex of the matched text>\"}", i)
				}
				cfg.AllowSecrets = append(cfg.AllowSecrets, AllowSecret{Pointer: ptr, SHA256: strings.ToLower(sum)})
			}
		case "fail_on":
			list, ok := val.([]any)
			if !ok {
				return nil, fmt.Errorf("/fail_on must be an array of change classes (%s)", change.Names(change.All))
			}
			cfg.FailOn = []change.Class{}
			for i, e := range list {
				s, _ := e.(string)
				c, err := change.ParseClass(s)
				if err != nil {
					return nil, fmt.Errorf("/fail_on/%d: %v", i, err)
				}
				cfg.FailOn = append(cfg.FailOn, c)
			}
		case "prices":
			if cfg.Prices, err = parsePrices(val); err != nil {
				return nil, err
			}
		case "normalize":
			if cfg.Normalize, err = normalize.Parse(val); err != nil {
				return nil, err
			}
		case "defaults":
			if cfg.Defaults, err = defaults.Parse(val); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("unknown field %q (allowed: exceptions, allow_secrets, fail_on, prices, normalize, defaults)", k)
		}
	}
	return cfg, nil
}

func keys(m map[string]bool) string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sortStrings(out)
	return strings.Join(out, ", ")
}

// ExceptionFor returns the first exception without conditions ("when")
// whose glob matches model ("*" matches any run of characters, "/"
// included: "meta-llama/*", "*").
func (c *Config) ExceptionFor(model string) *Exception {
	return c.ExceptionForRequest(map[string]any{"model": model})
}

// ExceptionForRequest returns the first exception whose glob matches the
// request's model and whose conditions hold in it.
func (c *Config) ExceptionForRequest(req map[string]any) *Exception {
	if c == nil {
		return nil
	}
	model, _ := req["model"].(string)
	for i := range c.Exceptions {
		ex := &c.Exceptions[i]
		var match bool
		if ex.glob != nil && ex.glob.Pattern == ex.Model {
			match = ex.glob.Match(model)
		} else {
			match = defaults.MatchGlob(ex.Model, model)
		}
		if match && defaults.Holds(req, ex.When) {
			return ex
		}
	}
	return nil
}

func (c *Config) allowed(m SecretMatch) bool {
	if c == nil {
		return false
	}
	for _, a := range c.AllowSecrets {
		if a.Pointer == m.Pointer && a.SHA256 == m.SHA256 {
			return true
		}
	}
	return false
}

// Relaxes reports whether e relaxes field.
func (e *Exception) Relaxes(field string) bool {
	if e == nil {
		return false
	}
	for _, r := range e.Relax {
		if r == field {
			return true
		}
	}
	return false
}
