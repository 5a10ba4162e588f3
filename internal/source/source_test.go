package source

import (
	"errors"
	"strings"
	"testing"
)

func TestFormat(t *testing.T) {
	cases := []struct {
		name string
		in   Source
		want string
	}{
		{"plain", Source{"src/app.py", 12, "summarize"}, "src/app.py:12:summarize"},
		{"method", Source{"cmd/agent/main.go", 7, "Agent.Run"}, "cmd/agent/main.go:7:Agent.Run"},
		{"colon and percent", Source{"a:b%c.go", 1, "ns::f"}, "a%3Ab%25c.go:1:ns%3A%3Af"},
		{"non-ASCII", Source{"café/ü.go", 3, "größe"}, "caf%C3%A9/%C3%BC.go:3:gr%C3%B6%C3%9Fe"},
		{"space and controls", Source{"my app/x.go", 2, "f\tg"}, "my%20app/x.go:2:f%09g"},
		{"digits in names", Source{"v2/1.go", 40, "f1:2"}, "v2/1.go:40:f1%3A2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Format(tc.in)
			if got != tc.want {
				t.Fatalf("Format(%+v) = %q, want %q", tc.in, got, tc.want)
			}
			if tc.in.String() != got {
				t.Fatalf("String() = %q, want %q", tc.in.String(), got)
			}
		})
	}
}

func TestParseValid(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want Source
	}{
		{"plain", "src/app.py:12:summarize", Source{"src/app.py", 12, "summarize"}},
		{"go method", "clients/openaigo/main.go:120:Agent.Run", Source{"clients/openaigo/main.go", 120, "Agent.Run"}},
		{"encoded", "ab%3Ac%25d.go:1:ns%3A%3Af", Source{"ab:c%d.go", 1, "ns::f"}},
		{"lower-case hex", "caf%c3%a9.go:3:f", Source{"café.go", 3, "f"}},
		{"raw colon in function", "app.js:9:Foo::bar", Source{"app.js", 9, "Foo::bar"}},
		{"split at first :digits:", "a.go:1:2:3", Source{"a.go", 1, "2:3"}},
		{"raw colon in file before split", "ab:c.go:5:f", Source{"ab:c.go", 5, "f"}},
		{"one-letter dir", "a/b.go:5:f", Source{"a/b.go", 5, "f"}},
		{"digits-only parts", "1:2:3", Source{"1", 2, "3"}},
		{"raw UTF-8", "src/café.py:4:größe", Source{"src/café.py", 4, "größe"}},
		{"encoded drive-like colon later", "x/C%3A.go:1:f", Source{"x/C:.go", 1, "f"}},
		{"dotfile", ".config/a.go:1:f", Source{".config/a.go", 1, "f"}},
		{"dots in name", "a/..b/c...go:1:<anonymous>", Source{"a/..b/c...go", 1, "<anonymous>"}},
		{"max line", "a.go:2147483647:f", Source{"a.go", MaxLine, "f"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.in)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.in, err)
			}
			if got != tc.want {
				t.Fatalf("Parse(%q) = %+v, want %+v", tc.in, got, tc.want)
			}
		})
	}
}

func TestParseInvalid(t *testing.T) {
	cases := []struct {
		name, in, wantMsg string
	}{
		{"empty", "", "want <file>:<line>:<function>"},
		{"no line", "app.py:summarize", "want <file>:<line>:<function>"},
		{"no function separator", "app.py:12", "want <file>:<line>:<function>"},
		{"negative line", "app.py:-1:f", "want <file>:<line>:<function>"},
		{"line zero", "app.py:0:f", "leading zeros"},
		{"leading zero", "app.py:012:f", "leading zeros"},
		{"line overflow", "app.py:2147483648:f", "out of range"},
		{"huge line", "app.py:99999999999999999999999:f", "out of range"},
		{"empty file", ":1:f", "empty file"},
		{"empty function", "a.go:1:", "empty function"},
		{"absolute", "/home/u/app.py:1:f", "absolute"},
		{"encoded absolute", "%2Fetc%2Fpasswd:1:f", "absolute"},
		{"drive letter", "C:/src/app.py:1:f", "drive letter"},
		{"encoded drive letter", "c%3A/src/app.py:1:f", "drive letter"},
		{"UNC", `\\server\share\a.py:1:f`, "'\\'"},
		{"backslash", `src\app.py:1:f`, "'\\'"},
		{"encoded backslash", "src%5Capp.py:1:f", "'\\'"},
		{"dotdot", "../secret.py:1:f", "'..'"},
		{"dotdot inside", "a/../../b.py:1:f", "'..'"},
		{"dotdot last", "a/..:1:f", "'..'"},
		{"encoded dotdot", "a/%2E%2E/b.py:1:f", "'..'"},
		{"dot segment", "./a.py:1:f", "clean path"},
		{"empty segment", "a//b.py:1:f", "clean path"},
		{"trailing slash", "a/:1:f", "clean path"},
		{"NUL in file", "a%00.py:1:f", "control character"},
		{"raw NUL in function", "a.py:1:f\x00", "control character"},
		{"newline in function", "a.py:1:f%0Ag", "control character"},
		{"DEL", "a%7F.py:1:f", "control character"},
		{"truncated escape", "a%4:1:f", "truncated escape"},
		{"truncated escape at end", "a.py:1:f%", "truncated escape"},
		{"bad hex", "a%zz.py:1:f", "malformed escape"},
		{"bad hex function", "a.py:1:f%G0", "malformed escape"},
		{"invalid UTF-8", "a%FF.py:1:f", "UTF-8"},
		{"invalid raw UTF-8", "a.py:1:f\xc3", "UTF-8"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.in)
			if err == nil {
				t.Fatalf("Parse(%q) = %+v, want an error", tc.in, got)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Parse(%q) error %v does not wrap ErrInvalid", tc.in, err)
			}
			if !strings.Contains(err.Error(), tc.wantMsg) {
				t.Fatalf("Parse(%q) error %q, want it to mention %q", tc.in, err, tc.wantMsg)
			}
			if got != (Source{}) {
				t.Fatalf("Parse(%q) returned %+v with an error, want the zero Source", tc.in, got)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	bad := []Source{
		{"a.go", 0, "f"},
		{"a.go", -3, "f"},
		{"a.go", MaxLine + 1, "f"},
		{"", 1, "f"},
		{"a.go", 1, ""},
		{"/a.go", 1, "f"},
		{"D:x.go", 1, "f"},
	}
	for _, s := range bad {
		if err := s.Validate(); !errors.Is(err, ErrInvalid) {
			t.Errorf("Validate(%+v) = %v, want ErrInvalid", s, err)
		}
		if _, err := Parse(Format(s)); err == nil {
			t.Errorf("Parse(Format(%+v)) accepted an invalid source", s)
		}
	}
}

func TestEscape(t *testing.T) {
	if got, want := Escape("a b:c%é"), "a%20b%3Ac%25%C3%A9"; got != want {
		t.Fatalf("Escape = %q, want %q", got, want)
	}
}

func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"src/app.py:12:summarize",
		"a%3Ab%25c.go:1:ns%3A%3Af",
		"caf%C3%A9.go:3:gr%C3%B6%C3%9Fe",
		"C:/x.go:1:f",
		"../x.go:1:f",
		`\\srv\x.go:1:f`,
		"a.go:0:f",
		"a%zz:1:f",
		"a.go:1:2:3",
		"",
	} {
		f.Add(seed, "", 0, "")
	}
	f.Add("", "clients/goopenai/main.go", 42, "Agent.Run")
	f.Add("", "dir with space/ü:.go", 7, "f%1")
	f.Fuzz(func(t *testing.T, raw, file string, line int, fn string) {
		// Anything: no panic; a success is valid and survives a round trip.
		if s, err := Parse(raw); err == nil {
			if verr := s.Validate(); verr != nil {
				t.Fatalf("Parse(%q) = %+v, which fails Validate: %v", raw, s, verr)
			}
			again, err := Parse(Format(s))
			if err != nil || again != s {
				t.Fatalf("Parse(Format(Parse(%q))) = %+v, %v; want %+v", raw, again, err, s)
			}
		}
		// Any valid source round-trips through Format and Parse.
		s := Source{File: file, Line: line, Function: fn}
		v := Format(s)
		got, err := Parse(v)
		if s.Validate() != nil {
			if err == nil {
				t.Fatalf("Parse(Format(%+v)) = %+v, want an error for an invalid source", s, got)
			}
			return
		}
		if err != nil {
			t.Fatalf("Parse(Format(%+v)) = %v", s, err)
		}
		if got != s {
			t.Fatalf("Parse(%q) = %+v, want %+v", v, got, s)
		}
		for i := 0; i < len(v); i++ {
			if c := v[i]; c <= ' ' || c >= 0x7F {
				t.Fatalf("Format(%+v) = %q holds byte %#x, want it escaped", s, v, c)
			}
		}
	})
}
