package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/traceforge/traceforge/internal/provider/preset"
)

// configTemplate is the .traceforge.json init writes: the request-defaults
// preset p (DESIGN §13.2), the exceptions it needs, no allowed secrets and
// the default fail_on (docs/team.md and docs/record.md comment it).
func configTemplate(p preset.Preset) string {
	return "{\n" +
		`  "defaults": ` + p.DefaultsJSON("  ") + ",\n" +
		`  "exceptions": ` + p.ExceptionsJSON("  ") + ",\n" +
		`  "allow_secrets": [],` + "\n" +
		`  "fail_on": ["tool-calls", "structure", "finish", "text"]` + "\n" +
		"}\n"
}

// reportPreset says which preset the config carries and every exception
// that relaxes the determinism rule: no exception is ever silent.
func reportPreset(w io.Writer, p preset.Preset) {
	fmt.Fprintf(w, "%-9s request defaults: the %s preset (%d rules; a field the app sends is never changed)\n", "", p.Kind, len(p.Defaults))
	for _, e := range p.Exceptions {
		what := "model " + e.Model
		if e.When != nil {
			var conds []string
			for k, v := range e.When {
				conds = append(conds, fmt.Sprintf("%s = %v", k, v))
			}
			what += " when " + strings.Join(conds, ", ")
		}
		fmt.Fprintf(w, "%-9s exception: %s relaxes %s (reported as nondeterministic by policy)\n", "", what, strings.Join(e.Relax, ", "))
	}
}
