package snapshot

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestFormatDocWorkedExample checks the worked example of docs/format.md
// against the code, so the documentation cannot drift from the format.
func TestFormatDocWorkedExample(t *testing.T) {
	md, err := os.ReadFile("../../docs/format.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := map[string]string{}
	re := regexp.MustCompile("(?s)```(?:json|text) (worked-[a-z-]+)\n(.*?)```")
	for _, m := range re.FindAllStringSubmatch(string(md), -1) {
		blocks[m[1]] = m[2]
	}
	for _, name := range []string{"worked-file", "worked-key-object", "worked-key", "worked-record-jcs", "worked-file-jcs", "worked-manifest"} {
		if _, ok := blocks[name]; !ok {
			t.Fatalf("docs/format.md lost its %s block", name)
		}
	}
	file := mustDecode(t, blocks["worked-file"])
	rec := file["snapshots"].([]any)[0].(map[string]any)
	// The key object and key are checked by the wire layer
	// (internal/provider/registry TestFormatDocWorkedKey).
	id := rec["id"].(string)
	without := map[string]any{}
	for k, v := range rec {
		if k != "hash" {
			without[k] = v
		}
	}
	rj, _ := Canonical(without)
	if got, want := string(rj), strings.TrimSpace(blocks["worked-record-jcs"]); got != want {
		t.Errorf("record JCS:\n got %s\nwant %s", got, want)
	}
	if h, _ := RecordHash(rec); h != rec["hash"] {
		t.Errorf("record hash %s, doc says %s", h, rec["hash"])
	}
	fj, _ := Canonical(map[string]any{"version": file["version"], "snapshots": []any{rec["hash"]}})
	if got, want := string(fj), strings.TrimSpace(blocks["worked-file-jcs"]); got != want {
		t.Errorf("file JCS:\n got %s\nwant %s", got, want)
	}
	if h, _ := FileHash(Version, []string{rec["hash"].(string)}); h != file["hash"] {
		t.Errorf("file hash %s, doc says %s", h, file["hash"])
	}
	// The file is byte-for-byte what traceforge writes.
	out, _ := MarshalFile(file)
	if string(out) != blocks["worked-file"] {
		t.Errorf("the documented file is not what traceforge writes:\n%s", out)
	}
	m := mustDecode(t, blocks["worked-manifest"])
	built, _ := BuildManifest([]ManifestEntry{{ID: id, Provider: "openai", File: RelPath("openai", id), Hash: file["hash"].(string)}}, m["created_at"].(string), m["updated_at"].(string))
	mb, _ := MarshalManifest(built)
	if string(mb) != blocks["worked-manifest"] {
		t.Errorf("documented manifest differs from the built one:\n%s", mb)
	}
}
