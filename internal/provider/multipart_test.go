package provider

import (
	"bytes"
	"encoding/base64"
	"mime/multipart"
	"reflect"
	"testing"
)

func multipartBody(t testing.TB, boundary, content string) []byte {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	if err := mw.SetBoundary(boundary); err != nil {
		t.Fatal(err)
	}
	_ = mw.WriteField("purpose", "user_data")
	fw, _ := mw.CreateFormFile("file", "f.bin")
	_, _ = fw.Write([]byte(content))
	_ = mw.Close()
	return b.Bytes()
}

// TestKeyMultipart: the same upload with two boundaries keys the same,
// text or binary; another file keys differently; a body that is not
// multipart is keyed as it is.
func TestKeyMultipart(t *testing.T) {
	for _, content := range []string{"notes", "\x00\xffbinary"} {
		a := ExchangeRequest("POST", "/v1/files", nil, multipartBody(t, "----formdata-undici-1111", content))
		b := ExchangeRequest("POST", "/v1/files", nil, multipartBody(t, "boundary-2222", content))
		if reflect.DeepEqual(a, b) || !reflect.DeepEqual(keyMultipart(a), keyMultipart(b)) {
			t.Fatalf("%q: keyed apart:\n%v\n%v", content, keyMultipart(a), keyMultipart(b))
		}
		c := ExchangeRequest("POST", "/v1/files", nil, multipartBody(t, "boundary-2222", content+"!"))
		if reflect.DeepEqual(keyMultipart(b), keyMultipart(c)) {
			t.Fatalf("%q: another file keys the same", content)
		}
	}
	plain := map[string]any{"method": "POST", "path": "/v1/x", "body_text": "--not a multipart body"}
	if !reflect.DeepEqual(keyMultipart(plain), plain) {
		t.Fatal("a non-multipart body was rewritten")
	}
}

// FuzzKeyMultipart: never panics, keying is idempotent, and a multipart
// body built with any valid boundary keys as the one built with
// KeyBoundary.
func FuzzKeyMultipart(f *testing.F) {
	f.Add([]byte("--b\r\nx\r\n--b--\r\n"), "abc", "content")
	f.Add([]byte("--\r\n--\r\n"), "x", "")
	f.Fuzz(func(t *testing.T, raw []byte, boundary, content string) {
		for _, r := range []map[string]any{
			{"body_text": string(raw)},
			{"body_b64": base64.StdEncoding.EncodeToString(raw)},
		} {
			k := keyMultipart(r)
			if !reflect.DeepEqual(keyMultipart(k), k) {
				t.Fatalf("keying twice changes the key: %v", r)
			}
		}
		if len(boundary) == 0 || len(boundary) > 70 {
			return
		}
		var b bytes.Buffer
		if multipart.NewWriter(&b).SetBoundary(boundary) != nil {
			return // not a boundary a writer may use
		}
		if bytes.Contains([]byte(content), []byte("--"+boundary)) || bytes.Contains([]byte(content), []byte("--"+KeyBoundary)) {
			return
		}
		got := keyMultipart(ExchangeRequest("POST", "/v1/files", nil, multipartBody(t, boundary, content)))
		want := keyMultipart(ExchangeRequest("POST", "/v1/files", nil, multipartBody(t, KeyBoundary, content)))
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("boundary %q keys apart:\n%v\n%v", boundary, got, want)
		}
	})
}
