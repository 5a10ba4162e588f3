package serve

import (
	"io"
	"net"
	"net/http"
	"reflect"
	"testing"
	"time"
)

func TestAllowList(t *testing.T) {
	got := AllowList([]string{"app.internal"}, "", "127.0.0.1:8787", "localhost:1", ":8787", "10.1.2.3:8787", "[::1]:9", "gateway.lan:80", "bad")
	want := []string{"app.internal", "10.1.2.3", "gateway.lan"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("AllowList = %q, want %q", got, want)
	}
}

func TestStartStop(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := Start(ln, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "hi") }))
	resp, err := http.Get("http://" + ln.Addr().String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "hi" {
		t.Errorf("body %q", body)
	}
	select {
	case <-r.Done():
		t.Fatal("Done closed while serving")
	default:
	}
	r.Stop(time.Second)
	select {
	case <-r.Done():
	default:
		t.Fatal("Done still open after Stop")
	}
	if _, err := http.Get("http://" + ln.Addr().String() + "/"); err == nil {
		t.Error("server still answers after Stop")
	}
}
