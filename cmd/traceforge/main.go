// Command traceforge is snapshot testing for LLM behaviour.
package main

import (
	"os"

	"github.com/traceforge/traceforge/internal/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:], cli.System())) }
