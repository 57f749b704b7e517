package research_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/researchtest"
	"github.com/deepresearch/deepresearch/research/state"
)

// TestMain doubles as the child process of TestResumeAfterKill9: with DR_KILL_CHILD_DIR set it runs a research
// graph into that folder and never returns normally — the parent kills it.
func TestMain(m *testing.M) {
	if dir := os.Getenv("DR_KILL_CHILD_DIR"); dir != "" {
		os.Exit(killChild(dir, os.Getenv("DR_KILL_CHILD_SITE")))
	}
	os.Exit(m.Run())
}

func killPlan() research.Plan {
	return research.Plan{SubQuestions: []research.SubQuestion{
		{ID: "q1", Question: "How fast is alpha?", Queries: []string{"alpha speed"}},
		{ID: "q2", Question: "Which labs ran alpha?", Queries: []string{"alpha lab"}}}}
}

func killChild(dir, siteURL string) int {
	site := researchtest.SiteAt(siteURL, manyPages(16))
	ledger := &llm.Ledger{}
	roles := &researchtest.Roles{Site: site, Plan: killPlan(), Ledger: ledger, PerQuery: 20}
	roles.NewModel(40 * time.Millisecond)
	_, err := research.Run(context.Background(), research.Config{
		Question: "How fast is alpha, and where was it measured?", Roles: roles.Set(), Fetcher: site.Fetcher(),
		OutDir: dir, Ledger: ledger, BatchSize: 2, EarlyStopWindow: -1,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func TestResumeAfterKill9(t *testing.T) {
	site := researchtest.NewSite(manyPages(16))
	defer site.Close()
	dir := filepath.Join(t.TempDir(), "run")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "DR_KILL_CHILD_DIR="+dir, "DR_KILL_CHILD_SITE="+site.URL)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// Wait until the child has stored some evidence, then kill -9 it mid-read.
	deadline := time.After(30 * time.Second)
	for {
		if countEvidenceEvents(filepath.Join(dir, research.EventsFile)) >= 6 {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("child ended before it was killed: %v\n%s", err, stderr.String())
		case <-deadline:
			t.Fatal("child stored no evidence in 30s")
		case <-time.After(5 * time.Millisecond):
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-done
	info, err := research.LoadRunInfo(dir)
	if err != nil || info.Status != research.RunRunning {
		t.Fatalf("killed run: %+v, %v", info, err)
	}
	stored := info.Evidence
	hitsBefore := site.Hits()

	ledger := &llm.Ledger{}
	roles := &researchtest.Roles{Site: site, Plan: killPlan(), Ledger: ledger, PerQuery: 20}
	roles.NewModel(0)
	rep, err := research.Resume(t.Context(), dir, research.Config{Roles: roles.Set(), Fetcher: site.Fetcher(), Ledger: ledger})
	if err != nil {
		t.Fatal(err)
	}
	if roles.Calls()["planner"] != 0 {
		t.Fatal("the plan was made again")
	}
	// Nothing lost: every item stored before the kill is still in the pool, and nothing is duplicated.
	if len(rep.Evidence) < stored {
		t.Fatalf("pool shrank from %d to %d", stored, len(rep.Evidence))
	}
	keys := map[string]bool{}
	for _, e := range rep.Evidence {
		k := state.EvidenceKey(e.Source, e.Quote)
		if keys[k] {
			t.Fatalf("duplicate evidence %s after resume", e.ID)
		}
		keys[k] = true
	}
	// Sources read before the kill are not fetched again; only reads in flight at the kill (≤ batch size) may be.
	again := 0
	for p, n := range site.Hits() {
		if n > 1 {
			again++
			if hitsBefore[p] == 0 {
				t.Fatalf("%s fetched %d times", p, n)
			}
		}
	}
	if again > 2 {
		t.Fatalf("%d sources fetched again after resume", again)
	}
	reads := map[string]bool{}
	for _, e := range readEvents(t, dir) {
		if e.Kind == research.EventRead {
			key := e.SubQuestion + " " + e.URL
			if reads[key] {
				t.Fatalf("%s read twice", key)
			}
			reads[key] = true
		}
	}
	checkReport(t, dir)
}

func countEvidenceEvents(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	return strings.Count(string(b), `"kind":"evidence"`)
}

func readEvents(t *testing.T, dir string) []research.Event {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, research.EventsFile))
	if err != nil {
		t.Fatal(err)
	}
	var out []research.Event
	for _, line := range strings.Split(string(b), "\n") {
		var e research.Event
		if json.Unmarshal([]byte(line), &e) == nil {
			out = append(out, e)
		}
	}
	return out
}
