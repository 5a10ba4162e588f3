package finding

import "testing"

func TestFindings(t *testing.T) {
	fs := Findings{
		{File: "openai/0123456789ab.json", Pointer: "/hash", Rule: "file-hash", Message: "mismatch"},
		{File: "manifest.json", Rule: "policy", Message: "relaxed", Severity: Note},
	}
	if fs.Errors() != 1 {
		t.Errorf("Errors() = %d, want 1 (notes never fail)", fs.Errors())
	}
	if got := fs[0].Error(); got != "openai/0123456789ab.json: /hash: mismatch [file-hash]" {
		t.Errorf("Error() = %q", got)
	}
	if got := fs[1].Error(); got != "manifest.json: relaxed [policy]" {
		t.Errorf("Error() without pointer = %q", got)
	}
	if Error.String() != "error" || Note.String() != "note" {
		t.Errorf("severity names %q %q", Error, Note)
	}
}
