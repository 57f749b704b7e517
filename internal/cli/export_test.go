package cli_test

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/internal/cli"
)

// show --format prints a run's sources as a bibliography; a format it does not know is bad usage (exit 2).
func TestShowFormats(t *testing.T) {
	cfg, _, ids := runsFixture(t)
	code, out, stderr := runCLI(t, nil, "show", "--config", cfg, "--format", "bibtex", ids[1])
	if code != 0 || !strings.Contains(out, "@misc{source1,") || !strings.Contains(out, "bees.md}") {
		t.Fatalf("bibtex: exit %d\n%s\n%s", code, out, stderr)
	}
	code, out, stderr = runCLI(t, nil, "show", "--config", cfg, "--format", "csljson")
	var items []map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &items) != nil || len(items) == 0 || items[0]["type"] != "document" {
		t.Fatalf("csljson: exit %d\n%s\n%s", code, out, stderr)
	}
	code, out, _ = runCLI(t, nil, "show", "--config", cfg, "--format", "ris")
	if code != 0 || !strings.HasPrefix(out, "TY  - ELEC\r\n") {
		t.Fatalf("ris: exit %d\n%q", code, out)
	}
	code, _, stderr = runCLI(t, nil, "show", "--config", cfg, "--format", "endnote")
	if code != cli.ExitUsage || !strings.Contains(stderr, "bibtex") {
		t.Fatalf("unknown format: exit %d\n%s", code, stderr)
	}
}

// Scripts read the exit code: bad usage is 2, a failure 1, an interrupted command 130.
func TestExitCodes(t *testing.T) {
	cfg := emptyConfig(t)
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"nosuchcommand"}, cli.ExitUsage},
		{[]string{"run", "--xyzzy", "q"}, cli.ExitUsage},
		{[]string{"show", "a", "b"}, cli.ExitUsage},
		{[]string{"show", "no-such-run"}, cli.ExitFailure},
	} {
		if code, _, stderr := runCLI(t, nil, append(tc.args, "--config", cfg)...); code != tc.want {
			t.Errorf("%v: exit %d, want %d\n%s", tc.args, code, tc.want, stderr)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var out, errb strings.Builder
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "bees.md"), []byte("# Bees\n\nHoneybees dance.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code := cli.Main(ctx, []string{"run", "--config", cfg, "--corpus", dir, "--out", dir + "/run", "what is this?"},
		strings.NewReader(""), &out, &errb, func(string) string { return "" })
	if code != cli.ExitInterrupted {
		t.Fatalf("interrupted run: exit %d\n%s", code, errb.String())
	}
}

// run --json prints the run summary, alone, on stdout (progress stays on stderr); a run whose report cites nothing
// exits 3, --json or not.
func TestRunJSONAndNothingFound(t *testing.T) {
	cfg := emptyConfig(t)
	corpus := t.TempDir()
	if err := os.WriteFile(filepath.Join(corpus, "bees.md"), []byte("# Bees\n\nHoneybees dance to tell nestmates where food is.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "run1")
	code, stdout, stderr := runCLI(t, nil, "run", "--plain", "--json", "--config", cfg, "--corpus", corpus, "--out", out, "How do honeybees tell where food is?")
	var sum struct {
		ID, Folder, Report, Status string
		Citations, Sources         int
	}
	if code != 0 || json.Unmarshal([]byte(stdout), &sum) != nil {
		t.Fatalf("exit %d; stdout is not one JSON summary:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if sum.ID == "" || sum.Folder != out || sum.Report != filepath.Join(out, "report.md") || sum.Status != "done" || sum.Citations == 0 || sum.Sources != 1 {
		t.Errorf("summary %+v", sum)
	}
	if !strings.Contains(stderr, "citations from") {
		t.Errorf("progress is not on stderr:\n%s", stderr)
	}
	for _, asJSON := range []bool{false, true} {
		args := []string{"run", "--plain", "--config", cfg, "--corpus", corpus, "--out", filepath.Join(t.TempDir(), "run2"), "What is the boiling point of mercury in kelvin?"}
		if asJSON {
			args = append(args, "--json")
		}
		code, stdout, stderr = runCLI(t, nil, args...)
		if code != cli.ExitNothing || !strings.Contains(stderr, "cites nothing") {
			t.Errorf("json=%v: a report citing nothing: exit %d, want %d\nstdout: %s\nstderr: %s", asJSON, code, cli.ExitNothing, stdout, stderr)
		}
		if asJSON && (json.Unmarshal([]byte(stdout), &sum) != nil || sum.Citations != 0 || sum.Status != "done") {
			t.Errorf("json summary of a report citing nothing: %s", stdout)
		}
	}
}

// show --format html|docx writes the exports; a binary format goes to --output FILE.
func TestShowExports(t *testing.T) {
	cfg, _, ids := runsFixture(t)
	code, out, stderr := runCLI(t, nil, "show", "--config", cfg, "--format", "html", ids[0])
	if code != 0 || !strings.HasPrefix(out, "<!DOCTYPE html>") || !strings.Contains(out, `class="cite"`) {
		t.Fatalf("html: exit %d\n%.300s\n%s", code, out, stderr)
	}
	file := filepath.Join(t.TempDir(), "r.docx")
	code, out, stderr = runCLI(t, nil, "show", "--config", cfg, "--format", "docx", "-o", file, ids[0])
	b, err := os.ReadFile(file)
	if code != 0 || out != "" || err != nil || !strings.HasPrefix(string(b), "PK") || !strings.Contains(stderr, file) {
		t.Fatalf("docx: exit %d, %d bytes (%v)\n%s\n%s", code, len(b), err, out, stderr)
	}
}

// serve and mcp --http on a port in use say which flag picks another.
func TestBusyPortNamesTheFlag(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cfg := emptyConfig(t)
	for flag, args := range map[string][]string{
		"--addr": {"serve", "--config", cfg, "--root", t.TempDir(), "--addr", ln.Addr().String()},
		"--http": {"mcp", "--config", cfg, "--runs", t.TempDir(), "--http", ln.Addr().String()},
	} {
		code, _, stderr := runCLI(t, nil, args...)
		if code != cli.ExitFailure || !strings.Contains(stderr, "address already in use") || !strings.Contains(stderr, flag+" HOST:PORT") {
			t.Errorf("%s on a busy port: exit %d\n%s", args[0], code, stderr)
		}
	}
}
