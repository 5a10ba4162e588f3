// Package source encodes and decodes the X-Traceforge-Source request header,
// which tells the recording proxy which line of the application made a call.
//
// The header value is
//
//	<file>:<line>:<function>
//
// where file and function are percent-encoded UTF-8. An encoder must encode
// '%', ':', every control character (0x00–0x1F, 0x7F) and every non-ASCII
// byte; [Format] also encodes the space so that no value starts or ends with
// whitespace that HTTP would trim. Any other byte may be encoded; [Parse]
// accepts %XX (either case) for any byte. A value is split at its first
// ":<digits>:", so a raw ':' in the function part is tolerated.
//
// Parse rejects values a helper must never send: malformed %-escapes, a line
// below 1 (or with leading zeros, or above [MaxLine]), an empty file or
// function, an absolute file (leading '/', a drive letter such as "C:"), a
// backslash anywhere in the file (which also rules out "\\server" paths), a
// file that is not in clean form ("..", "." or empty segments, a trailing
// '/'), control characters (NUL included) and invalid UTF-8. The proxy treats a
// rejected value as no source at all.
package source

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Header is the request header that carries the caller's source location.
const Header = "X-Traceforge-Source"

// MaxLine is the largest line number Parse accepts.
const MaxLine = 1<<31 - 1

// ErrInvalid is wrapped by every error Parse and Validate return.
var ErrInvalid = errors.New("invalid " + Header + " value")

// Source is the place in the application that made an LLM call.
type Source struct {
	File     string // path relative to the project root, slash-separated
	Line     int    // 1-based line number
	Function string // function name without its package path
}

// String returns the value in its header form.
func (s Source) String() string { return Format(s) }

// Display is the source as reports show it: file:line:function, not
// percent-encoded (redact before printing).
func (s Source) Display() string { return fmt.Sprintf("%s:%d:%s", s.File, s.Line, s.Function) }

// Less orders sources by (file, line, function); a run keeps the smallest
// source of a key (DESIGN §11 "Source").
func (s Source) Less(o Source) bool {
	if s.File != o.File {
		return s.File < o.File
	}
	if s.Line != o.Line {
		return s.Line < o.Line
	}
	return s.Function < o.Function
}

// Format returns the header value for s. It does not validate s: a Source
// that fails [Source.Validate] formats to a value that Parse rejects.
func Format(s Source) string {
	var b strings.Builder
	b.Grow(len(s.File) + len(s.Function) + 12)
	escape(&b, s.File)
	b.WriteByte(':')
	b.WriteString(strconv.Itoa(s.Line))
	b.WriteByte(':')
	escape(&b, s.Function)
	return b.String()
}

// Escape percent-encodes one field (a file or a function) as Format does.
func Escape(field string) string {
	var b strings.Builder
	escape(&b, field)
	return b.String()
}

const upperhex = "0123456789ABCDEF"

func mustEscape(c byte) bool {
	return c == '%' || c == ':' || c <= ' ' || c >= 0x7F
}

func escape(b *strings.Builder, s string) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if mustEscape(c) {
			b.WriteByte('%')
			b.WriteByte(upperhex[c>>4])
			b.WriteByte(upperhex[c&0xF])
			continue
		}
		b.WriteByte(c)
	}
}

// Parse decodes and validates a header value.
func Parse(v string) (Source, error) {
	fileEnc, lineStr, fnEnc, ok := split(v)
	if !ok {
		return Source{}, fmt.Errorf("%w: want <file>:<line>:<function>", ErrInvalid)
	}
	if lineStr[0] == '0' {
		return Source{}, fmt.Errorf("%w: line %q: want an integer >= 1 without leading zeros", ErrInvalid, lineStr)
	}
	line, err := strconv.Atoi(lineStr)
	if err != nil || line > MaxLine {
		return Source{}, fmt.Errorf("%w: line %q out of range", ErrInvalid, lineStr)
	}
	file, err := unescape(fileEnc)
	if err != nil {
		return Source{}, fmt.Errorf("%w: file: %v", ErrInvalid, err)
	}
	fn, err := unescape(fnEnc)
	if err != nil {
		return Source{}, fmt.Errorf("%w: function: %v", ErrInvalid, err)
	}
	s := Source{File: file, Line: line, Function: fn}
	if err := s.Validate(); err != nil {
		return Source{}, err
	}
	return s, nil
}

// split cuts v at its first ":<digits>:".
func split(v string) (file, line, fn string, ok bool) {
	for i := 0; i < len(v); i++ {
		if v[i] != ':' {
			continue
		}
		j := i + 1
		for j < len(v) && v[j] >= '0' && v[j] <= '9' {
			j++
		}
		if j > i+1 && j < len(v) && v[j] == ':' {
			return v[:i], v[i+1 : j], v[j+1:], true
		}
	}
	return "", "", "", false
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

func unescape(s string) (string, error) {
	if !strings.Contains(s, "%") {
		return s, nil
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '%' {
			b = append(b, c)
			continue
		}
		if i+2 >= len(s) {
			return "", fmt.Errorf("truncated escape %q", s[i:])
		}
		hi, ok1 := unhex(s[i+1])
		lo, ok2 := unhex(s[i+2])
		if !ok1 || !ok2 {
			return "", fmt.Errorf("malformed escape %q", s[i:i+3])
		}
		b = append(b, hi<<4|lo)
		i += 2
	}
	return string(b), nil
}

// Validate reports whether s may be sent and stored: see the package
// documentation for the rules.
func (s Source) Validate() error {
	if s.Line < 1 || s.Line > MaxLine {
		return fmt.Errorf("%w: line %d: want 1 to %d", ErrInvalid, s.Line, MaxLine)
	}
	if err := checkText("function", s.Function); err != nil {
		return err
	}
	if err := checkText("file", s.File); err != nil {
		return err
	}
	f := s.File
	switch {
	case strings.Contains(f, `\`):
		return fmt.Errorf("%w: file %q: use '/' as the separator, never '\\'", ErrInvalid, f)
	case f[0] == '/':
		return fmt.Errorf("%w: file %q is absolute: send it relative to the project root", ErrInvalid, f)
	case len(f) >= 2 && f[1] == ':' && isLetter(f[0]):
		return fmt.Errorf("%w: file %q has a drive letter: send it relative to the project root", ErrInvalid, f)
	}
	for _, seg := range strings.Split(f, "/") {
		switch seg {
		case "..":
			return fmt.Errorf("%w: file %q has a '..' segment", ErrInvalid, f)
		case ".", "":
			return fmt.Errorf("%w: file %q is not a clean path (no '.' or empty segments, no trailing '/')", ErrInvalid, f)
		}
	}
	return nil
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func checkText(what, v string) error {
	if v == "" {
		return fmt.Errorf("%w: empty %s", ErrInvalid, what)
	}
	if !utf8.ValidString(v) {
		return fmt.Errorf("%w: %s is not valid UTF-8", ErrInvalid, what)
	}
	for _, r := range v {
		if r < ' ' || r == 0x7F {
			return fmt.Errorf("%w: %s contains control character %U", ErrInvalid, what, r)
		}
	}
	return nil
}
