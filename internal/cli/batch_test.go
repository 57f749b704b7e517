package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBatchDeepResearchBenchFormatResumable(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, "cache"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "config"))
	docs := filepath.Join(t.TempDir(), "docs")
	if err := os.MkdirAll(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		"channels.md": "# Channels\n\nA send on a channel is synchronized before the completion of the corresponding receive from that channel.\n",
		"mutex.md":    "# Mutexes\n\nA mutex protects shared memory from concurrent access by goroutines.\n",
	} {
		if err := os.WriteFile(filepath.Join(docs, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "deepresearch.yaml")
	if err := os.WriteFile(cfg, []byte("research:\n  out_dir: "+filepath.Join(dir, "runs")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(dir, "questions.jsonl")
	out := filepath.Join(dir, "results.jsonl")
	write := func(s string) {
		if err := os.WriteFile(in, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Bad input is refused whole, naming the line; nothing is run.
	write(`{"id": "1", "prompt": "What does a channel send synchronize with?"}` + "\n" + `{"id": "1", "prompt": "again"}` + "\n")
	if _, stderr, code := runCLI(t, "--config", cfg, "batch", in, "--out", out, "--corpus", docs); code == 0 || !strings.Contains(stderr, "line 2: id 1 already on line 1") {
		t.Fatalf("duplicate id: exit %d, %s", code, stderr)
	}
	write(`{"id": "1", "prompt": "What does a channel send synchronize with?"}` + "\n" + `not json` + "\n")
	if _, stderr, code := runCLI(t, "--config", cfg, "batch", in, "--out", out, "--corpus", docs); code == 0 || !strings.Contains(stderr, "line 2") {
		t.Fatalf("malformed line: exit %d, %s", code, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("results written for a refused batch")
	}

	write(`{"id": "1", "prompt": "What does a channel send synchronize with?"}` + "\n" +
		`{"id": "q/2", "prompt": "What does a mutex protect?"}` + "\n" +
		`{"id": "3", "question": "What is synchronized before a receive completes?"}` + "\n")
	if stdout, stderr, code := runCLI(t, "--config", cfg, "batch", in, "--out", out, "--corpus", docs, "--concurrency", "2"); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	results := func() []batchResult {
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		var rs []batchResult
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var r batchResult
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				continue
			}
			rs = append(rs, r)
		}
		return rs
	}
	rs := results()
	if len(rs) != 3 {
		t.Fatalf("%d results, want 3", len(rs))
	}
	for _, r := range rs {
		if r.Article == "" || r.Prompt == "" {
			t.Errorf("result %s: empty article or prompt", r.ID)
		}
		if _, err := os.Stat(r.Report); err != nil {
			t.Errorf("result %s: report.json: %v", r.ID, err)
		}
	}
	// Again: nothing to do.
	_, stderr, code := runCLI(t, "--config", cfg, "batch", in, "--out", out, "--corpus", docs)
	if code != 0 || !strings.Contains(stderr, "3 already answered, 0 to run") || len(results()) != 3 {
		t.Fatalf("second batch: exit %d, %d results\n%s", code, len(results()), stderr)
	}
	// A batch killed while writing: the last line torn, one result lost. Only that one runs again.
	b, _ := os.ReadFile(out)
	lines := strings.SplitAfter(strings.TrimSpace(string(b)), "\n")
	torn := lines[0] + lines[1][:len(lines[1])/2]
	if err := os.WriteFile(out, []byte(torn), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code = runCLI(t, "--config", cfg, "batch", in, "--out", out, "--corpus", docs)
	if code != 0 || !strings.Contains(stderr, "1 already answered, 2 to run") {
		t.Fatalf("after a torn line: exit %d\n%s", code, stderr)
	}
	ids := map[string]int{}
	for _, r := range results() {
		ids[r.ID]++
	}
	if len(ids) != 3 || ids["1"] != 1 || ids["q/2"] != 1 || ids["3"] != 1 {
		t.Errorf("ids after resuming = %v", ids)
	}
}
