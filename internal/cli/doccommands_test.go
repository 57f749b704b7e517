package cli_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/researchtest/openaifake"
	"github.com/deepresearch/deepresearch/sources/websearch"
)

// docCommand is one command of a shell block in the user documentation.
type docCommand struct {
	where string // file:line
	text  string
	words []string
	env   map[string]string // what the block's export lines set before it
}

// notRun are the documented commands that are not deepresearch's and that this test leaves alone, with why.
var notRun = map[string]string{
	"go install github.com/deepresearch/deepresearch/cmd/deepresearch@latest": "installs from the module proxy, which tests never reach",
	"go get github.com/deepresearch/deepresearch@latest":                      "downloads from the module proxy, which tests never reach",
	"scripts/test": "the whole suite, this test among it",
	"docker compose -f deploy/compose.yaml up -d --build":                                                      "needs Docker; internal/scaletest's TestComposeServicesRunWithoutDocker runs the file's services",
	"docker compose -f deploy/compose.yaml up -d --scale worker=4":                                             "needs Docker; internal/scaletest's TestComposeServicesRunWithoutDocker runs the worker replicas",
	`docker compose -f deploy/compose.yaml run --rm worker run --detach --corpus /corpus "LSM 树如何处理删除？"`:       "needs Docker; TestComposeServicesRunWithoutDocker runs the file's own submission",
	"DEEPRESEARCH_TOKEN=$(openssl rand -hex 16) deepresearch serve --api --addr 0.0.0.0:8787 --corpus ~/notes": "a server on every interface that runs until stopped; TestServeAPIEndToEnd runs serve --api through openai-go",
}

var fenceRE = regexp.MustCompile("(?s)```(?:sh|bash|shell)\n(.*?)```")

// docCommands parses the shell blocks of a Markdown file into commands: a trailing backslash continues a line, a
// comment ends it, an export line sets a variable for the commands after it.
func docCommands(t *testing.T, file, home, goroot string) []docCommand {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	var out []docCommand
	for _, m := range fenceRE.FindAllSubmatchIndex(b, -1) {
		block := string(b[m[2]:m[3]])
		startLine := bytes.Count(b[:m[2]], []byte("\n")) + 1
		lines := strings.Split(block, "\n")
		for i := 0; i < len(lines); i++ {
			line, at := lines[i], startLine+i
			for strings.HasSuffix(strings.TrimSpace(line), `\`) && i+1 < len(lines) {
				i++
				line = strings.TrimSuffix(strings.TrimSpace(line), `\`) + " " + lines[i]
			}
			words, err := shellWords(line, home, goroot, env)
			if err != nil {
				t.Fatalf("%s:%d: %v: %s", file, at, err, line)
			}
			if len(words) == 0 {
				continue
			}
			if words[0] == "export" {
				for _, kv := range words[1:] {
					k, v, _ := strings.Cut(kv, "=")
					env[k] = v
				}
				continue
			}
			snapshot := map[string]string{}
			for k, v := range env {
				snapshot[k] = v
			}
			out = append(out, docCommand{where: fmt.Sprintf("%s:%d", filepath.Base(file), at), text: strings.TrimSpace(line), words: words, env: snapshot})
		}
	}
	return out
}

// shellWords splits a command line as sh would for the forms the documentation uses: single and double quotes,
// $VAR and $(go env GOROOT) (in double quotes or bare), ~ at the start of a word, and # comments.
func shellWords(line, home, goroot string, env map[string]string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	expand := func(s string, i int) (string, int) { // s[i] == '$'
		if strings.HasPrefix(s[i:], "$(go env GOROOT)") {
			return goroot, i + len("$(go env GOROOT)")
		}
		j := i + 1
		for j < len(s) && (s[j] == '_' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= '0' && s[j] <= '9') {
			j++
		}
		if j == i+1 {
			return "$", j
		}
		return env[s[i+1:j]], j
	}
	for i := 0; i < len(line); {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
			i++
		case c == '#' && !inWord:
			i = len(line)
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unclosed single quote")
			}
			cur.WriteString(line[i+1 : i+1+j])
			inWord, i = true, i+2+j
		case c == '"':
			i++
			for i < len(line) && line[i] != '"' {
				if line[i] == '$' {
					v, j := expand(line, i)
					cur.WriteString(v)
					i = j
					continue
				}
				cur.WriteByte(line[i])
				i++
			}
			if i >= len(line) {
				return nil, fmt.Errorf("unclosed double quote")
			}
			inWord, i = true, i+1
		case c == '$':
			v, j := expand(line, i)
			cur.WriteString(v)
			inWord, i = true, j
		case c == '~' && !inWord:
			cur.WriteString(home)
			inWord, i = true, i+1
		default:
			cur.WriteByte(c)
			inWord, i = true, i+1
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// TestDocumentedCommands runs every command of the shell blocks of README.md and docs/zh as written. A command
// runs fully when everything it needs is on this machine: the extractive engine over the Go distribution's
// documentation, and a model provider pointed at the openaifake server (the documented DEEPRESEARCH_BASE_URL, or
// the command's own --base-url given the fake server's address) over a ~/notes folder of a fresh home. A command
// whose sources are on the internet (--web arxiv, wikipedia, tavily), that needs a Temporal cluster, or whose
// provider no fake server here plays the research roles for (anthropic) is only parsed: run with --help, which refuses an unknown command or flag.
// The log lists each command and how it was checked.
func TestDocumentedCommands(t *testing.T) {
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	notes := filepath.Join(home, "notes")
	if err := os.MkdirAll(notes, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		"lsm-trees.md": "# LSM trees\n\nAn LSM tree handles deletes by writing a tombstone, a marker that hides older values of the key.\n\n" +
			"Compaction later drops the tombstone together with the values it hides.\n",
		"lsm-zh.md": "# LSM 树如何处理删除\n\nLSM 树如何处理删除：它写入一个墓碑标记，遮住这个键的旧值。\n\n之后的合并过程会把墓碑标记和被遮住的旧值一起清除。\n",
	} {
		if err := os.WriteFile(filepath.Join(notes, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fake := openaifake.New(t, openaifake.Config{})
	files := []string{filepath.Join("..", "..", "README.md")}
	zh, _ := filepath.Glob(filepath.Join("..", "..", "docs", "zh", "*.md"))
	files = append(files, zh...)
	var cmds []docCommand
	for _, f := range files {
		cmds = append(cmds, docCommands(t, f, home, strings.TrimSpace(string(goroot)))...)
	}
	if len(cmds) < 10 {
		t.Fatalf("found %d documented commands; the parser lost some", len(cmds))
	}
	t.Chdir(t.TempDir()) // runs/ lands here
	done := map[string]string{}
	var full, parsed int
	for _, c := range cmds {
		args := c.words
		switch {
		case len(args) > 3 && args[0] == "go" && args[1] == "run" && args[2] == "./cmd/deepresearch":
			args = args[3:]
		case args[0] == "deepresearch":
			args = args[1:]
		default:
			why, ok := notRun[c.text]
			if !ok {
				t.Errorf("%s: %q is not a deepresearch command; run it here or list it in notRun with the reason", c.where, c.text)
			}
			t.Logf("not run  %s: %s (%s)", c.where, c.text, why)
			continue
		}
		key := strings.Join(args, "\x00")
		if where, ok := done[key]; ok {
			t.Logf("same     %s: as %s", c.where, where)
			continue
		}
		done[key] = c.where
		env := map[string]string{"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, ".config"), "XDG_DATA_HOME": filepath.Join(home, ".local", "share")}
		for k, v := range c.env {
			env[k] = v
		}
		if why := onlyParsed(args); why != "" {
			code, stdout, stderr := runCLI(t, env, append(args, "--help")...)
			if code != 0 || !strings.Contains(stdout, "Usage:") {
				t.Errorf("%s: %s --help: exit %d\n%s%s", c.where, c.text, code, stdout, stderr)
			}
			// The values --help does not check: every web provider named must exist.
			for i, a := range args {
				if a == "--web" && i+1 < len(args) {
					for _, name := range strings.Split(args[i+1], ",") {
						if !slices.Contains(websearch.Names(), name) {
							t.Errorf("%s: unknown web provider %q", c.where, name)
						}
					}
				}
			}
			parsed++
			t.Logf("parsed   %s: %s (%s)", c.where, c.text, why)
			continue
		}
		if hasFlag(args, "--provider") {
			env["DEEPRESEARCH_BASE_URL"] = fake.URL + "/v1"
			for i := range args {
				if args[i] == "--base-url" && i+1 < len(args) {
					args = append(append([]string(nil), args[:i+1]...), append([]string{fake.URL + "/v1"}, args[i+2:]...)...)
				}
			}
		}
		code, stdout, stderr := runCLI(t, env, append(args, "--plain")...)
		full++
		report := strings.TrimSpace(stdout)
		switch {
		case code == 0:
			rep, err := research.LoadReport(filepath.Dir(report))
			if err != nil || len(rep.Citations) == 0 {
				t.Errorf("%s: %s: report %s: %v (%d citations)\n%s", c.where, c.text, report, err, len(rep.Citations), stderr)
			}
			t.Logf("ran      %s: %s → %d citations", c.where, c.text, len(rep.Citations))
		default:
			t.Errorf("%s: %s: exit %d\nstdout: %s\nstderr: %s", c.where, c.text, code, stdout, stderr)
		}
	}
	t.Logf("%d documented commands: %d run fully, %d parsed only", len(cmds), full, parsed)
	if full < 4 {
		t.Errorf("only %d commands ran fully", full)
	}
}

// onlyParsed says why a documented command cannot run fully here, "" when it can.
func onlyParsed(args []string) string {
	for i, a := range args {
		if a == "--web" && i+1 < len(args) && args[i+1] != "searxng" {
			return "its web search provider is on the internet"
		}
		if a == "--temporal" {
			return "it needs a Temporal cluster and PostgreSQL, which this test does not start (internal/scaletest runs them)"
		}
		if a == "--provider" && i+1 < len(args) && args[i+1] == "anthropic" {
			return "no fake Anthropic server plays the research roles"
		}
	}
	return ""
}

func hasFlag(args []string, name string) bool {
	for _, a := range args {
		if a == name || strings.HasPrefix(a, name+"=") {
			return true
		}
	}
	return false
}
