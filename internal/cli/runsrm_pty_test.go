package cli_test

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/deepresearch/deepresearch/internal/cli"
)

// runs rm asks on a terminal (a real pty here): "n" keeps the runs, "y" deletes them; without a terminal it needs
// --yes and says so.
func TestRunsRmAsks(t *testing.T) {
	cfg, runs, ids := runsFixture(t)
	answer := func(reply string) (int, string) {
		t.Helper()
		master, tty, err := pty.Open()
		if err != nil {
			t.Fatal(err)
		}
		defer master.Close()
		defer tty.Close()
		var out strings.Builder
		prompt := make(chan string, 1)
		go func() {
			r := bufio.NewReader(master)
			var seen strings.Builder
			for {
				b, err := r.ReadByte()
				if err != nil {
					prompt <- seen.String()
					return
				}
				seen.WriteByte(b)
				if strings.HasSuffix(seen.String(), "[y/N] ") {
					master.Write([]byte(reply + "\n"))
					prompt <- seen.String()
					return
				}
			}
		}()
		done := make(chan int, 1)
		go func() {
			done <- cli.Main(t.Context(), []string{"runs", "rm", ids[0], "--config", cfg}, tty, &out, tty, func(string) string { return "" })
		}()
		select {
		case code := <-done:
			tty.Close()
			return code, <-prompt + out.String()
		case <-time.After(30 * time.Second):
			t.Fatal("runs rm did not finish")
		}
		return 0, ""
	}
	code, seen := answer("n")
	if code != 0 || !strings.Contains(seen, ids[0]) || !strings.Contains(seen, "Delete these 1 run(s)?") {
		t.Fatalf("asked: exit %d\n%s", code, seen)
	}
	if _, err := os.Stat(filepath.Join(runs, ids[0])); err != nil {
		t.Fatalf("answered n, and the run is gone: %v", err)
	}
	code, seen = answer("y")
	if _, err := os.Stat(filepath.Join(runs, ids[0])); code != 0 || !os.IsNotExist(err) || !strings.Contains(seen, "removed") {
		t.Fatalf("answered y: exit %d, folder %v\n%s", code, err, seen)
	}
	code, _, stderr := runCLI(t, nil, "runs", "rm", ids[1], "--config", cfg)
	if code != cli.ExitUsage || !strings.Contains(stderr, "--yes") {
		t.Errorf("no terminal, no --yes: exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(runs, ids[1])); err != nil {
		t.Errorf("refused, and the run is gone: %v", err)
	}
}

// show --format docx (or pdf) does not pour a binary file onto a terminal: it asks for --output.
func TestShowBinaryFormatNotToATerminal(t *testing.T) {
	cfg, _, ids := runsFixture(t)
	master, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer master.Close()
	defer tty.Close()
	go func() { // drain the terminal
		b := make([]byte, 4096)
		for {
			if _, err := master.Read(b); err != nil {
				return
			}
		}
	}()
	var errb strings.Builder
	code := cli.Main(t.Context(), []string{"show", "--config", cfg, "--format", "docx", ids[0]}, strings.NewReader(""), tty, &errb, func(string) string { return "" })
	if code != cli.ExitUsage || !strings.Contains(errb.String(), "--output report.docx") {
		t.Errorf("docx to a terminal: exit %d\n%s", code, errb.String())
	}
}
