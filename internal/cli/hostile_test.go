package cli

// Regression tests for the CLI defects a hostile upstream and client found
// (issue 19, DESIGN §12.10).

import (
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// urlSecret is a gateway key carried in an upstream URL.
const urlSecret = "gw-key-7d1e0b9a55c3"

// noSecret fails when any channel shows urlSecret (or the user-info
// password of the refusal case).
func noSecret(t *testing.T, what string, channels map[string]string) {
	t.Helper()
	for name, text := range channels {
		for _, s := range []string{urlSecret, "pw-8c2f61d0"} {
			if strings.Contains(text, s) {
				t.Errorf("%s: %s shows %q:\n%s", what, name, s, text)
			}
		}
	}
}

// TestUpstreamURLSecretsNeverPrinted (§12.10.4): an upstream URL whose
// query carries a key (OPENAI_BASE_URL="http://host/v1?api-key=…") or whose
// user info carries a password is never printed whole: not in record's
// banner and summary, not in verify --live's text and JSON reports, not in
// the refusals of a bad or self-looping upstream. Every channel is grepped.
func TestUpstreamURLSecretsNeverPrinted(t *testing.T) {
	e := newRecEnv(t)
	e.env["OPENAI_BASE_URL"] = e.fake.URL + "/v1?api-key=" + urlSecret
	e.env["ANTHROPIC_BASE_URL"] = e.fake.URL
	code, out, errOut := e.run(append([]string{"record", "--"}, e.helper("openai:Hello gateway", 0)...)...)
	if code != 0 {
		t.Fatalf("record: exit %d\n%s\n%s", code, out, errOut)
	}
	noSecret(t, "record", map[string]string{"stdout": out, "stderr": errOut})
	if !strings.Contains(errOut, "/v1?api-key=REDACTED") {
		t.Errorf("the banner does not name the upstream redacted:\n%s", errOut)
	}
	for rel, b := range e.files() {
		noSecret(t, "record", map[string]string{rel: string(b)})
	}

	// verify --live against the same kind of URL, unreachable: text and
	// JSON reports.
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	e.env["OPENAI_BASE_URL"] = deadURL + "/v1?api-key=" + urlSecret
	e.env["OPENAI_API_KEY"] = "sk-test-live"
	code, out, errOut = e.run("verify", "--live")
	if code != 1 {
		t.Fatalf("verify --live: exit %d\n%s\n%s", code, out, errOut)
	}
	noSecret(t, "verify --live", map[string]string{"stdout": out, "stderr": errOut})
	if !strings.Contains(out+errOut, "api-key=REDACTED") {
		t.Errorf("the live report does not name the upstream redacted:\n%s\n%s", out, errOut)
	}
	report := filepath.Join(e.root, "live.json")
	code, out, errOut = e.run("verify", "--live", "--format", "json", "--output", report)
	data, err := os.ReadFile(report)
	if code != 1 || err != nil {
		t.Fatalf("verify --live --format json: exit %d, %v\n%s\n%s", code, err, out, errOut)
	}
	noSecret(t, "verify --live --format json", map[string]string{"stdout": out, "stderr": errOut, "report": string(data)})

	// Refusals: user info, a self-loop.
	code, out, errOut = e.run("record", "--openai-upstream", "http://me:pw-8c2f61d0@127.0.0.1:1/v1", "--", "true")
	if code != 2 {
		t.Fatalf("user info: exit %d\n%s", code, errOut)
	}
	noSecret(t, "user-info refusal", map[string]string{"stdout": out, "stderr": errOut})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	code, out, errOut = e.run("record", "--listen", "127.0.0.1:"+port, "--openai-upstream", "http://127.0.0.1:"+port+"/v1?api-key="+urlSecret)
	if code != 2 || !strings.Contains(errOut, "this traceforge server itself") {
		t.Fatalf("self-loop: exit %d\n%s", code, errOut)
	}
	noSecret(t, "self-loop refusal", map[string]string{"stdout": out, "stderr": errOut})
	code, out, errOut = e.run("record", "--openai-upstream", "http://127.0.0.1:1/v1?api-key="+urlSecret+"\x7f", "--", "true")
	if code != 2 {
		t.Fatalf("bad URL: exit %d\n%s", code, errOut)
	}
	noSecret(t, "bad-URL refusal", map[string]string{"stdout": out, "stderr": errOut})
}

// TestDashWithoutCommand (§12.10.6): `record --` used to start the
// foreground server (hanging CI) and `verify --` to exit 0 having replayed
// nothing; both are usage errors now, and neither starts anything.
func TestDashWithoutCommand(t *testing.T) {
	for _, args := range [][]string{{"record", "--"}, {"verify", "--"}, {"record", "--openai-upstream", "http://127.0.0.1:1/v1", "--"}} {
		root := t.TempDir()
		writeBase(t, filepath.Join(root, ".ai-snapshots"))
		io, out, errOut := testStreams(t, root)
		code := Main(args, io)
		if code != ExitUsage || !strings.Contains(errOut.String(), "-- is not followed by a command") || !strings.Contains(errOut.String(), "hint: ") {
			t.Errorf("%v: exit %d, want 2 with the reason\n%s", args, code, errOut)
		}
		if strings.Contains(out.String(), "export ") {
			t.Errorf("%v: a server started:\n%s", args, out)
		}
	}
}

// TestDirNamingAFile (§12.10.6): --dir naming a file says it is not a
// directory (it used to say "does not exist"), exit 2, for every command.
func TestDirNamingAFile(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "notes.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"--dir", "notes.txt", "verify"},
		{"--dir", "notes.txt", "record", "--openai-upstream", "http://127.0.0.1:1/v1", "--", "true"},
		{"--dir", "notes.txt", "snapshot", "list"},
	} {
		io, _, errOut := testStreams(t, root)
		code := Main(args, io)
		if code != ExitUsage || !strings.Contains(errOut.String(), "notes.txt is a file") || strings.Contains(errOut.String(), "does not exist") {
			t.Errorf("%v: exit %d\n%s", args, code, errOut)
		}
	}
}

// TestSelfLoopCoversEveryLocalAddress (§12.10.6): an upstream of
// http://0.0.0.0:PORT/v1 (with --allow-host 0.0.0.0, so that its Host is
// accepted) used to loop through the proxy until file descriptors ran out;
// it is refused at start, exit 2, like every other address of this host.
func TestSelfLoopCoversEveryLocalAddress(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	e := newRecEnv(t)
	for _, up := range []string{"http://0.0.0.0:" + port + "/v1", "http://[::]:" + port + "/v1", "http://127.0.0.1:" + port + "/v1"} {
		code, _, errOut := e.run("record", "--listen", "127.0.0.1:"+port, "--allow-host", "0.0.0.0",
			"--openai-upstream", up, "--anthropic-upstream", e.fake.URL, "--", "true")
		if code != ExitUsage || !strings.Contains(errOut, "this traceforge server itself") {
			t.Errorf("%s: exit %d\n%s", up, code, errOut)
		}
	}
}

func TestLoopsBack(t *testing.T) {
	host, _ := os.Hostname()
	var lan string // a non-loopback address of this machine, if any
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
				lan = n.IP.String()
				break
			}
		}
	}
	cases := []struct {
		up, bound string
		want      bool
	}{
		{"http://0.0.0.0:8787/v1", "127.0.0.1:8787", true},
		{"http://[::]:8787/v1", "127.0.0.1:8787", true},
		{"http://localhost:8787/v1", "127.0.0.1:8787", true},
		{"http://127.0.0.1:8787/v1", "0.0.0.0:8787", true},
		{"http://0.0.0.0:8788/v1", "127.0.0.1:8787", false},
		{"https://0.0.0.0:8787/v1", "127.0.0.1:8787", false},
		{"http://192.0.2.10:8787/v1", "0.0.0.0:8787", false}, // TEST-NET: not this host
		{"http://api.example.com:8787/v1", "0.0.0.0:8787", false},
	}
	if host != "" {
		cases = append(cases, struct {
			up, bound string
			want      bool
		}{"http://" + host + ":8787/v1", "127.0.0.1:8787", true})
	}
	if lan != "" {
		cases = append(cases, []struct {
			up, bound string
			want      bool
		}{
			{"http://" + lan + ":8787/v1", "0.0.0.0:8787", true},
			{"http://" + lan + ":8787/v1", lan + ":8787", true},
			{"http://" + lan + ":8787/v1", "127.0.0.1:8787", false},
		}...)
	}
	for _, c := range cases {
		u, err := url.Parse(c.up)
		if err != nil {
			t.Fatal(err)
		}
		if got := loopsBack(u, c.bound); got != c.want {
			t.Errorf("loopsBack(%s, %s) = %v, want %v", c.up, c.bound, got, c.want)
		}
	}
}
