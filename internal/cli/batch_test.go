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
		ids[string(r.ID)]++
	}
	if len(ids) != 3 || ids[`"1"`] != 1 || ids[`"q/2"`] != 1 || ids[`"3"`] != 1 {
		t.Errorf("ids after resuming = %v", ids)
	}

	// DeepResearch Bench numbers its questions: numeric ids are accepted and written back as numbers. Another
	// question file reusing ids 1 and 3 asks other questions: they are run, not answered from the first file's
	// runs, and the results file keeps both files' answers apart.
	other := filepath.Join(dir, "other.jsonl")
	if err := os.WriteFile(other, []byte(`{"id": 1, "prompt": "What does a mutex protect from goroutines?"}`+"\n"+
		`{"id": 3, "prompt": "What protects shared memory?"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code = runCLI(t, "--config", cfg, "batch", other, "--out", out, "--corpus", docs)
	if code != 0 || !strings.Contains(stderr, "0 already answered, 2 to run") {
		t.Fatalf("second question file: exit %d\n%s", code, stderr)
	}
	byLine := map[string]batchResult{}
	for _, r := range results() {
		byLine[string(r.ID)+" "+r.Prompt] = r
	}
	for _, want := range []string{`1 What does a mutex protect from goroutines?`, `3 What protects shared memory?`,
		`"1" What does a channel send synchronize with?`, `"3" What is synchronized before a receive completes?`} {
		r, ok := byLine[want]
		if !ok {
			t.Errorf("no result %s in %v", want, byLine)
			continue
		}
		rep, err := os.ReadFile(r.Report)
		if err != nil || !strings.Contains(string(rep), r.Prompt) {
			t.Errorf("result %s: its report is not its question's: %v", want, err)
		}
	}
	if byLine[`1 What does a mutex protect from goroutines?`].Report == byLine[`"1" What does a channel send synchronize with?`].Report {
		t.Error("id 1 of the second file was answered by the first file's run")
	}
}

// Ids are strings or numbers, kept as given; anything else, or an id repeated (1 and "1" are one id), is
// refused with its line.
func TestReadBatchIDs(t *testing.T) {
	qs, err := readBatch(strings.NewReader(`{"id": 7, "prompt": "What is a kiln?"}` + "\n" +
		`{"id": " q 8 ", "prompt": "What is a glaze?"}` + "\n" + `{"id": 1.5e3, "prompt": "What is slip?"}` + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 3 || qs[0].ID != "7" || string(qs[0].Raw) != "7" || qs[1].ID != "q 8" || string(qs[1].Raw) != `"q 8"` ||
		qs[2].ID != "1.5e3" || string(qs[2].Raw) != "1.5e3" {
		t.Errorf("ids: %+v", qs)
	}
	for _, bad := range []struct{ in, want string }{
		{`{"id": true, "prompt": "What is a kiln?"}`, "line 1: id true: want a string or a number"},
		{`{"id": {"a": 1}, "prompt": "What is a kiln?"}`, "want a string or a number"},
		{`{"id": null, "prompt": "What is a kiln?"}`, "line 1: no id"},
		{`{"prompt": "What is a kiln?"}`, "line 1: no id"},
		{`{"id": "  ", "prompt": "What is a kiln?"}`, "line 1: no id"},
		{`{"id": 1, "prompt": "What is a kiln?"}` + "\n" + `{"id": "1", "prompt": "What is a glaze?"}`, "line 2: id 1 already on line 1"},
	} {
		if _, err := readBatch(strings.NewReader(bad.in)); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: %v, want %q", bad.in, err, bad.want)
		}
	}
}

// batchDir names a question by the file, the id and the prompt: change any of them and it is another run.
func TestBatchDirIdentity(t *testing.T) {
	q := batchQuestion{ID: "1", Prompt: "What is a kiln?"}
	base := batchDir("runs", "/a/q.jsonl", q)
	for name, dir := range map[string]string{
		"another file":   batchDir("runs", "/b/q.jsonl", q),
		"another prompt": batchDir("runs", "/a/q.jsonl", batchQuestion{ID: "1", Prompt: "What is a glaze?"}),
		"another id":     batchDir("runs", "/a/q.jsonl", batchQuestion{ID: "2", Prompt: q.Prompt}),
	} {
		if dir == base {
			t.Errorf("%s: same run folder %s", name, dir)
		}
	}
	if again := batchDir("runs", "/a/q.jsonl", q); again != base || !strings.HasPrefix(filepath.Base(base), "1-") {
		t.Errorf("batchDir is not stable or readable: %s, %s", base, again)
	}
}

func FuzzReadBatch(f *testing.F) {
	f.Add(`{"id": 1, "prompt": "What is a kiln?"}`)
	f.Add(`{"id": "x", "question": "What is a kiln?"}`)
	f.Add(`{"id": -0.5e-3, "prompt": "q"}`)
	f.Fuzz(func(t *testing.T, in string) {
		qs, err := readBatch(strings.NewReader(in))
		if err != nil {
			return
		}
		for _, q := range qs {
			text, raw, err := batchID(q.Raw)
			if err != nil || text != q.ID || string(raw) != string(q.Raw) || q.ID == "" {
				t.Fatalf("accepted id %q (raw %s) does not read back: %q %s %v", q.ID, q.Raw, text, raw, err)
			}
		}
	})
}
