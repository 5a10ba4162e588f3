// Package scenario holds what the end-to-end clients share: the modes, the
// prompts, the get_weather tool and the transcript they print. The SDK calls
// themselves stay in each client's main.go, so that snapshots attribute them
// there.
package scenario

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// Modes are the scenarios every client runs, one per invocation.
var Modes = []string{"plain", "stream", "tool"}

// Deterministic request settings shared by every client.
const (
	OpenAIModel    = "gpt-4o-mini"
	AnthropicModel = "claude-3-5-haiku-latest"
	MaxTokens      = 64
	Seed           = 42
)

// SuffixEnv names the variable whose value every client appends to its user
// prompt; the suite sets it to make a replay drift on purpose.
const SuffixEnv = "TF_E2E_PROMPT_SUFFIX"

// Prompt returns the user prompt for mode, with the drift suffix appended.
func Prompt(mode string) string {
	var p string
	switch mode {
	case "plain":
		p = "Say hello to Ada Lovelace in one short sentence."
	case "stream":
		p = "Write one line about Grace Hopper and compilers."
	case "tool":
		p = "What is the weather in Paris today?"
	case "chain":
		p = "Name one thing Alan Turing is known for."
	case "rag":
		p = "What does traceforge do with LLM calls?"
	case "generate":
		p = "Why is the sky blue? One sentence."
	case "embed":
		p = "Ada Lovelace wrote the first program."
	case "default":
		p = "Name the first programmer in three words."
	}
	return p + os.Getenv(SuffixEnv)
}

// Tool is the get_weather function the tool mode offers.
const (
	ToolName        = "get_weather"
	ToolDescription = "Get the current weather for a city."
)

// ToolSchema returns get_weather's JSON Schema for its arguments.
func ToolSchema() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"city": map[string]any{"type": "string", "description": "City name, e.g. Paris"},
		},
		"required": []string{"city"},
	}
}

// ToolSchemaJSON is ToolSchema as JSON.
func ToolSchemaJSON() json.RawMessage {
	b, err := json.Marshal(ToolSchema())
	if err != nil {
		panic(err)
	}
	return b
}

// RunTool executes get_weather: a fixed answer derived from the arguments.
func RunTool(name, arguments string) string {
	var args struct {
		City string `json:"city"`
	}
	if name != ToolName || json.Unmarshal([]byte(arguments), &args) != nil || args.City == "" {
		return `{"error":"unknown tool or bad arguments"}`
	}
	return fmt.Sprintf(`{"city":%q,"conditions":"sunny","temperature_c":21}`, args.City)
}

// Mode returns the single mode argument or exits with usage status 2.
func Mode(client string) string {
	if len(os.Args) != 2 || !valid(os.Args[1]) {
		fmt.Fprintf(os.Stderr, "usage: %s %s\n", client, strings.Join(Modes, "|"))
		os.Exit(2)
	}
	return os.Args[1]
}

func valid(mode string) bool {
	for _, m := range Modes {
		if m == mode {
			return true
		}
	}
	return false
}

// Transcript collects what the application saw, without per-call ids, and
// prints it framed so that a harness can cut it out of mixed output.
type Transcript struct {
	client, mode string
	lines        []string
}

// New starts the transcript of one run.
func New(client, mode string) *Transcript { return &Transcript{client: client, mode: mode} }

// Add records one line; %q-style quoting keeps each entry on one line.
func (t *Transcript) Add(format string, args ...any) {
	t.lines = append(t.lines, fmt.Sprintf(format, args...))
}

// Begin returns the first line of the framed transcript.
func Begin(client, mode string) string { return fmt.Sprintf("=== %s %s ===", client, mode) }

// End is the last line of the framed transcript.
const End = "=== end ==="

// Print writes the framed transcript.
func (t *Transcript) Print(w io.Writer) {
	fmt.Fprintln(w, Begin(t.client, t.mode))
	for _, l := range t.lines {
		fmt.Fprintln(w, l)
	}
	fmt.Fprintln(w, End)
}

// Run is the main of every Go client: it reads the mode argument, runs that
// mode's function with client and a fresh transcript, and prints the
// transcript, or the SDK error with exit status 1.
func Run[C any](name string, client C, plain, stream, tool func(context.Context, C, *Transcript) error) {
	mode := Mode(name)
	run := map[string]func(context.Context, C, *Transcript) error{"plain": plain, "stream": stream, "tool": tool}[mode]
	tr := New(name, mode)
	if err := run(context.Background(), client, tr); err != nil {
		Fail(name, err)
	}
	tr.Print(os.Stdout)
}

// RunModes is Run for a client with its own set of modes (fns keys): it
// reads the mode argument (usage error, exit 2, for any other), runs it and
// prints the transcript, or the SDK error with exit status 1.
func RunModes[C any](name string, client C, fns map[string]func(context.Context, C, *Transcript) error) {
	var modes []string
	for m := range fns {
		modes = append(modes, m)
	}
	sort.Strings(modes)
	run, ok := fns[""]
	if len(os.Args) == 2 {
		run, ok = fns[os.Args[1]]
	}
	if !ok {
		fmt.Fprintf(os.Stderr, "usage: %s %s\n", name, strings.Join(modes, "|"))
		os.Exit(2)
	}
	tr := New(name, os.Args[1])
	if err := run(context.Background(), client, tr); err != nil {
		Fail(name, err)
	}
	tr.Print(os.Stdout)
}

// Fail prints an SDK error and exits 1.
func Fail(client string, err error) {
	fmt.Fprintf(os.Stderr, "%s: error: %v\n", client, err)
	os.Exit(1)
}
