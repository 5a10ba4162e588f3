package cli

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// IOStreams carries everything a command may touch outside its arguments.
// Tests build one with fake streams and environment.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// Getenv reads the environment the command runs in.
	Getenv func(string) string
	// Environ is the full environment handed to child commands.
	Environ func() []string
	// IsTerminal reports whether ErrOut/Out is an interactive terminal (colour, progress).
	IsTerminal bool
	// Context returns a context cancelled on SIGINT/SIGTERM.
	Context func() (context.Context, context.CancelFunc)
	// Dir is the working directory ("" = process cwd).
	Dir string
}

// System returns the IOStreams of the running process.
func System() *IOStreams {
	return &IOStreams{
		In:         os.Stdin,
		Out:        os.Stdout,
		ErrOut:     os.Stderr,
		Getenv:     os.Getenv,
		Environ:    os.Environ,
		IsTerminal: isTerminal(os.Stderr),
		Context: func() (context.Context, context.CancelFunc) {
			return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		},
	}
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	return fi.Mode()&os.ModeCharDevice != 0
}

// Colour reports whether coloured output is allowed.
func (s *IOStreams) Colour() bool {
	if s.Getenv("NO_COLOR") != "" {
		return false
	}
	return s.IsTerminal
}
