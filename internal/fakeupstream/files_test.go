package fakeupstream

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"testing"
)

// upload sends a multipart upload of content named name, the way the SDKs
// do (a random boundary each time).
func upload(t *testing.T, url, name, content string, auth bool) (int, map[string]any) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	_ = mw.WriteField("purpose", "user_data")
	fw, _ := mw.CreateFormFile("file", name)
	_, _ = fw.Write([]byte(content))
	_ = mw.Close()
	req, _ := http.NewRequest(http.MethodPost, url+"/v1/files", &b)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	if auth {
		req.Header.Set("Authorization", "Bearer sk-test")
	}
	return doJSON(t, req)
}

func doJSON(t *testing.T, req *http.Request) (int, map[string]any) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var v map[string]any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("%d %s: %v", resp.StatusCode, data, err)
	}
	return resp.StatusCode, v
}

// TestFiles: an upload answers OpenAI's file object, its id derived from
// what was uploaded (the same file twice, with two boundaries, gets one
// id); the file is retrieved and deleted by id; an unknown id is a 404 in
// OpenAI's error shape; no key is a 401.
func TestFiles(t *testing.T) {
	srv := httptest.NewServer(New(Options{}))
	defer srv.Close()
	st, f := upload(t, srv.URL, "notes.txt", "traceforge records LLM calls", true)
	if st != 200 || f["object"] != "file" || f["filename"] != "notes.txt" || f["bytes"] != float64(28) || f["status"] != "processed" {
		t.Fatalf("%d %v", st, f)
	}
	if _, again := upload(t, srv.URL, "notes.txt", "traceforge records LLM calls", true); again["id"] != f["id"] {
		t.Fatalf("the same upload got ids %v and %v", f["id"], again["id"])
	}
	id := f["id"].(string)
	get := func(method, id string) (int, map[string]any) {
		req, _ := http.NewRequest(method, srv.URL+"/v1/files/"+id, nil)
		req.Header.Set("Authorization", "Bearer sk-test")
		return doJSON(t, req)
	}
	if st, g := get("GET", id); st != 200 || g["id"] != id {
		t.Fatalf("retrieve: %d %v", st, g)
	}
	if st, d := get("DELETE", id); st != 200 || d["deleted"] != true {
		t.Fatalf("delete: %d %v", st, d)
	}
	if st, e := get("GET", id); st != 404 || e["error"].(map[string]any)["message"] != "No such File object: "+id {
		t.Fatalf("after delete: %d %v", st, e)
	}
	if st, _ := upload(t, srv.URL, "a.txt", "x", false); st != 401 {
		t.Fatalf("no key: %d", st)
	}
}
