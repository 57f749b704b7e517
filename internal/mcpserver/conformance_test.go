package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/deepresearch/deepresearch/internal/webui/researchtest"
	"github.com/deepresearch/deepresearch/mcptools/mcptest"
)

// nodeBinary is the pinned Node.js that install.sh puts next to the packages (the conformance suite needs >= 22).
func nodeBinary(t *testing.T) string {
	t.Helper()
	matches, _ := filepath.Glob(filepath.Join(mcptest.NodeCache(), "node_modules", "node-linux-*", "bin", "node"))
	if len(matches) == 0 {
		t.Fatalf("no pinned Node.js in %s: run internal/mcpserver/testdata/install.sh", mcptest.NodeCache())
	}
	return matches[0]
}

// TestConformanceSuite runs the official MCP conformance suite against `deepresearch mcp --http`, the real binary.
// Every scenario must pass except those listed, with their reason, in testdata/conformance-baseline.yml; the suite
// itself also fails when a listed scenario passes, so the list cannot go stale.
func TestConformanceSuite(t *testing.T) {
	node := nodeBinary(t)
	suite := filepath.Join(mcptest.NodeCache(), "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	if _, err := os.Stat(suite); err != nil {
		t.Fatalf("the MCP conformance suite is not installed: run internal/mcpserver/testdata/install.sh (%v)", err)
	}
	baseline, err := filepath.Abs(filepath.Join("testdata", "conformance-baseline.yml"))
	if err != nil {
		t.Fatal(err)
	}
	bin := researchtest.BuildBinary(t)
	home := t.TempDir()
	corpusDir := researchtest.New(t, 0).Dir
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	srv := exec.CommandContext(ctx, bin, "mcp", "--http", "127.0.0.1:0", "--corpus", corpusDir, "--runs", filepath.Join(home, "runs"))
	srv.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, "config"), "XDG_CACHE_HOME="+filepath.Join(home, "cache"),
		"DEEPRESEARCH_PROVIDER=", "DEEPRESEARCH_MODEL=")
	srv.Dir = home
	var stderr strings.Builder
	srv.Stderr = &stderr
	stdout, err := srv.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cancel()
		_ = srv.Wait()
	}()
	url := ""
	sc := bufio.NewScanner(stdout)
	for url == "" && sc.Scan() {
		if m := regexp.MustCompile(`(http://\S+/mcp)`).FindStringSubmatch(sc.Text()); m != nil {
			url = m[1]
		}
	}
	if url == "" {
		t.Fatalf("deepresearch mcp --http printed no URL; stderr:\n%s", stderr.String())
	}

	out := t.TempDir()
	cmd := exec.CommandContext(ctx, node, suite, "server", "--url", url, "--expected-failures", baseline, "-o", out)
	cmd.Env = append(os.Environ(), "HOME="+home, "NO_COLOR=1")
	report, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("conformance suite: %v\n%s\nserver stderr:\n%s", err, report, stderr.String())
	}
	t.Logf("conformance suite:\n%s", tail(string(report), 40))

	// Independently of the suite's exit code: the scenarios of features deepresearch has ran and passed.
	passed := map[string]bool{}
	err = filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Name() != "checks.json" {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		var checks []struct{ ID, Status string }
		if err := json.Unmarshal(data, &checks); err != nil {
			return err
		}
		for _, c := range checks {
			if c.Status == "SUCCESS" {
				passed[c.ID] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"server-initialize", "logging-set-level", "ping", "completion-complete", "tools-list",
		"resources-list", "resources-subscribe", "resources-unsubscribe", "prompts-list"} {
		if !passed[id] {
			t.Errorf("conformance check %s did not pass", id)
		}
	}
	if strings.Contains(stderr.String(), "level=WARN") {
		t.Errorf("the server warned while the suite's clients came and went:\n%s", stderr.String())
	}
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
