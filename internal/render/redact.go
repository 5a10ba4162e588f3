// Package render only formats: it writes the values of internal/result —
// the verify report, the record summary, the migrate plan, a run's totals —
// in every output format, one file per format (text — coloured only on a
// terminal —, JSON, JUnit XML, GitHub workflow annotations, HTML), through
// the one redacting writer every report and log line goes through. It
// imports neither check nor ledger: the key rules it redacts with are
// internal/secret's.
package render

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/traceforge/traceforge/internal/secret"
)

// Redactor is the one place output is redacted: every report and log line
// is written through it, and every key-shaped string (internal/secret's
// rules) reaches the underlying writer as [REDACTED:<rule>]. Matching runs
// on the text with the formats' escapes decoded (JSON \n and \uXXXX, GitHub
// %0A, XML &#xA;), so escaping never hides a key from a rule.
//
// A Redactor holds text until Flush (a key may be split over several
// writes); in line mode (NewLineRedactor) each complete line is written at
// once, for logs that must appear as they happen.
type Redactor struct {
	w     io.Writer
	lines bool
	buf   bytes.Buffer
}

// NewRedactor returns a Redactor that writes to w on Flush.
func NewRedactor(w io.Writer) *Redactor { return &Redactor{w: w} }

// NewLineRedactor returns a Redactor that writes each complete line to w
// as soon as it is written.
func NewLineRedactor(w io.Writer) *Redactor { return &Redactor{w: w, lines: true} }

// Write buffers p; in line mode it writes every complete line.
func (r *Redactor) Write(p []byte) (int, error) {
	r.buf.Write(p)
	if r.lines {
		if i := bytes.LastIndexByte(r.buf.Bytes(), '\n'); i >= 0 {
			done := string(r.buf.Next(i + 1))
			if _, err := io.WriteString(r.w, redact(done)); err != nil {
				return 0, err
			}
		}
	}
	return len(p), nil
}

// Flush writes everything buffered, redacted.
func (r *Redactor) Flush() error {
	if r.buf.Len() == 0 {
		return nil
	}
	s := r.buf.String()
	r.buf.Reset()
	_, err := io.WriteString(r.w, redact(s))
	return err
}

func redact(s string) string { return secret.RedactView(s, decoded) }

// xmlEntities are the escapes encoding/xml and html/template write
// (html/template also escapes + as &#43;).
var xmlEntities = map[string]string{"&amp;": "&", "&lt;": "<", "&gt;": ">", "&#34;": `"`, "&#39;": "'", "&#43;": "+",
	"&quot;": `"`, "&apos;": "'", "&#xA;": "\n", "&#xD;": "\r", "&#x9;": "\t"}

// ghEscapes are the escapes of GitHub workflow commands.
var ghEscapes = map[string]string{"%0A": "\n", "%0D": "\r", "%25": "%", "%3A": ":", "%2C": ","}

// decoded returns s with the JSON, XML and GitHub escapes decoded, and for
// each byte of the result (plus one past its end) its offset in s.
func decoded(s string) (string, []int) {
	if !strings.ContainsAny(s, `\&%`) {
		at := make([]int, len(s)+1)
		for i := range at {
			at[i] = i
		}
		return s, at
	}
	var b strings.Builder
	at := make([]int, 0, len(s)+1)
	emit := func(text string, from int) {
		b.WriteString(text)
		for range len(text) {
			at = append(at, from)
		}
	}
	for i := 0; i < len(s); {
		text, n := decodeAt(s, i)
		if n == 0 {
			emit(s[i:i+1], i)
			i++
			continue
		}
		emit(text, i)
		i += n
	}
	at = append(at, len(s))
	return b.String(), at
}

// decodeAt decodes the escape starting at s[i], returning its text and
// length (0 when there is none).
func decodeAt(s string, i int) (string, int) {
	switch s[i] {
	case '\\':
		if i+1 >= len(s) {
			return "", 0
		}
		switch c := s[i+1]; c {
		case 'n':
			return "\n", 2
		case 'r':
			return "\r", 2
		case 't':
			return "\t", 2
		case '"', '\\', '/':
			return string(c), 2
		case 'u':
			if i+6 <= len(s) {
				if v, err := strconv.ParseUint(s[i+2:i+6], 16, 32); err == nil {
					var buf [4]byte
					return string(buf[:utf8.EncodeRune(buf[:], rune(v))]), 6
				}
			}
		}
	case '&':
		if j := strings.IndexByte(s[i:], ';'); j > 0 && j <= 6 {
			if t, ok := xmlEntities[s[i:i+j+1]]; ok {
				return t, j + 1
			}
		}
	case '%':
		if i+3 <= len(s) {
			if t, ok := ghEscapes[s[i:i+3]]; ok {
				return t, 3
			}
		}
	}
	return "", 0
}
