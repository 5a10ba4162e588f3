package registry

import (
	"os"
	"strings"
	"testing"
)

// TestProvidersDocMatchesDescriptors: docs/providers.md names every
// provider's folder, base-URL variables, upstream flag and default (or
// that it has none), and key variables, as the descriptors define them.
func TestProvidersDocMatchesDescriptors(t *testing.T) {
	data, err := os.ReadFile("../../../docs/providers.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	for _, d := range Providers() {
		def := "`--" + d.UpstreamFlag() + "` (`" + d.DefaultUpstream + "`)"
		if d.DefaultUpstream == "" {
			def = "`--" + d.UpstreamFlag() + "` (none: required when used)"
		}
		want := []string{"`" + string(d.Name) + "/`", "`" + d.BaseURLEnv + "=http://127.0.0.1:PORT" + d.VersionPrefix + "`", def}
		for _, v := range d.MoreBaseURLEnv {
			want = append(want, "`"+v.Name+"=http://127.0.0.1:PORT"+v.Path+"`")
		}
		for _, k := range d.KeyEnv {
			want = append(want, "`"+k+"`")
		}
		if d.ReplayKeyEnv != "" && !strings.Contains(doc, "`"+d.ReplayKeyEnv+"`") {
			t.Errorf("docs/providers.md does not name %s's replay key placeholder %s", d.Name, d.ReplayKeyEnv)
		}
		for _, w := range want {
			if !strings.Contains(doc, w) {
				t.Errorf("docs/providers.md does not say %s for %s", w, d.Name)
			}
		}
	}
}
