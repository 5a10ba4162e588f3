package cli

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
)

// testStreams returns IOStreams with captured output, working in dir, with
// the given environment (nothing is inherited).
func testStreams(t testing.TB, dir string, env ...string) (*IOStreams, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	var out, errOut bytes.Buffer
	envm := map[string]string{"PATH": os.Getenv("PATH"), "HOME": os.Getenv("HOME")}
	for _, e := range env {
		k, v, _ := strings.Cut(e, "=")
		envm[k] = v
	}
	return &IOStreams{
		In:     strings.NewReader(""),
		Out:    &out,
		ErrOut: &errOut,
		Getenv: func(k string) string { return envm[k] },
		Environ: func() []string {
			var l []string
			for k, v := range envm {
				l = append(l, k+"="+v)
			}
			return l
		},
		Context: func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) },
		Dir:     dir,
	}, &out, &errOut
}
