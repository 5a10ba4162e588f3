// Package htmltest opens report pages in headless Chromium for tests
// (Debian's chromium, which .ci/run installs): the DOM after the page's
// script ran, and screenshots at desktop and phone width for a person to
// look at. A test that needs the browser skips only when it is absent.
package htmltest

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// Chromium returns the browser's path, or skips the test when it is not
// installed (apt-get install -y chromium).
func Chromium(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "/usr/bin/chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("chromium is not installed (apt-get install -y chromium); the HTML report is not checked in a browser")
	return ""
}

// Run runs headless Chromium with args and returns its standard output.
func Run(t testing.TB, bin string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir()}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, stderr.String())
	}
	return out
}

// DOM loads file (with the URL fragment, e.g. "#verdict=failed") and
// returns the DOM once the page's script ran.
func DOM(t testing.TB, bin, file, fragment string) string {
	t.Helper()
	return string(Run(t, bin, "--dump-dom", "file://"+file+fragment))
}

// Screenshots writes NAME-desktop.png (1280×900) and NAME-phone.png
// (390×844) of file into $TRACEFORGE_SCREENSHOT_DIR (default
// $TMPDIR/traceforge-html-screenshots), checks their widths, and returns
// their paths.
func Screenshots(t testing.TB, bin, file, name string) []string {
	t.Helper()
	dir := os.Getenv("TRACEFORGE_SCREENSHOT_DIR")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "traceforge-html-screenshots")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, size := range []struct {
		name string
		w, h int
	}{{"desktop", 1280, 900}, {"phone", 390, 844}} {
		shot := filepath.Join(dir, name+"-"+size.name+".png")
		Run(t, bin, "--hide-scrollbars", "--window-size="+strconv.Itoa(size.w)+","+strconv.Itoa(size.h), "--screenshot="+shot, "file://"+file)
		f, err := os.Open(shot)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := png.DecodeConfig(f)
		f.Close()
		if err != nil || cfg.Width != size.w {
			t.Errorf("%s screenshot: %v, width %d, want %d", size.name, err, cfg.Width, size.w)
		}
		t.Logf("screenshot: %s", shot)
		paths = append(paths, shot)
	}
	return paths
}
