package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/traceforge/traceforge/internal/project"
)

// githubWorkflow is the workflow `init --ci github` writes. root is the
// project root, sub its path inside the repository ("." at the top) and dir
// the snapshot folder's name inside root. The test command is the one the project's build
// files suggest (go.mod: go test ./...; package.json: npm test; Python:
// pytest); otherwise a placeholder the workflow tells you to replace.
func githubWorkflow(root, sub, dir string) string {
	has := func(name string) bool {
		_, err := os.Stat(filepath.Join(root, name))
		return err == nil
	}
	test := "./run-tests  # TODO: replace with your test command"
	var setup []string
	switch {
	case has("go.mod"):
		test = "go test ./..."
	case has("package.json"):
		test = "npm test"
		setup = append(setup,
			"      - uses: actions/setup-node@v4",
			"        with:",
			"          node-version: lts/*",
			"      - run: npm ci")
	case has("pyproject.toml"), has("requirements.txt"):
		test = "pytest"
		setup = append(setup,
			"      - uses: actions/setup-python@v5",
			"        with:",
			"          python-version: \"3.x\"")
		if has("requirements.txt") {
			setup = append(setup, "      - run: pip install -r requirements.txt")
		} else {
			setup = append(setup, "      - run: pip install .")
		}
	}
	install := "latest"
	if v := version(); strings.HasPrefix(v, "v") {
		install = v
	}
	flags := ""
	if dir != project.DefaultDir {
		flags = " --dir " + dir
	}
	prefix := ""
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	w("# Written by traceforge init --ci github; see docs/team.md.")
	w("name: traceforge")
	w("on:")
	w("  pull_request:")
	w("  push:")
	w("    branches: [main]")
	w("permissions:")
	w("  contents: read")
	w("jobs:")
	w("  snapshots:")
	w("    runs-on: ubuntu-latest")
	if sub != "." && sub != "" {
		prefix = sub + "/"
		w("    defaults:")
		w("      run:")
		w("        working-directory: %s", sub)
	}
	w("    steps:")
	w("      - uses: actions/checkout@v4")
	w("        with:")
	w("          fetch-depth: 0  # traceforge diff reads the base branch")
	w("      - uses: actions/setup-go@v5")
	w("        with:")
	w("          go-version: stable")
	w("      - name: Install traceforge")
	w("        run: go install github.com/traceforge/traceforge/cmd/traceforge@%s", install)
	for _, l := range setup {
		w("%s", l)
	}
	w("      - name: Verify snapshots (static checks, annotations on the failing files)")
	w("        run: traceforge verify%s --format github", flags)
	w("      - name: Replay the snapshots to the tests (offline, no API key)")
	w("        run: traceforge verify%s --format junit --output traceforge-junit.xml -- %s", flags, test)
	w("      - name: HTML report of the failed replay")
	w("        if: failure()")
	w("        run: traceforge verify%s --format html --output traceforge-verify.html -- %s", flags, test)
	w("      - name: Snapshot changes of this pull request")
	w("        if: always() && github.event_name == 'pull_request'")
	w("        run: |")
	w("          traceforge diff%s \"origin/${{ github.base_ref }}\" --format html --output traceforge-report.html", flags)
	w("          traceforge diff%s \"origin/${{ github.base_ref }}\" --format markdown >> \"$GITHUB_STEP_SUMMARY\"", flags)
	w("      - name: Upload the reports")
	w("        if: always()")
	w("        uses: actions/upload-artifact@v4")
	w("        with:")
	w("          name: traceforge-report")
	w("          if-no-files-found: ignore")
	w("          path: |")
	w("            %straceforge-verify.html", prefix)
	w("            %straceforge-report.html", prefix)
	w("            %straceforge-junit.xml", prefix)
	return b.String()
}
