package contextmgr

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/deepresearch/deepresearch/agent"
	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/workspace"
)

func memoryMessages(ms []llm.Message) []llm.Message {
	var out []llm.Message
	for _, m := range ms {
		if kindOf(m) == kindMemory {
			out = append(out, m)
		}
	}
	return out
}

// AGENTS.md is pinned right after the system prompt and stands intact after every tier of compaction.
func TestProjectMemoryPinnedThroughCompaction(t *testing.T) {
	proj := t.TempDir()
	agents := "# Project rules\nAlways cite sources.\nNever delete data/."
	if err := os.WriteFile(filepath.Join(proj, "AGENTS.md"), []byte(agents), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"tier1", Config{}},
		{"tier2", Config{Clearing: ClearOff}},
		{"tier3", Config{Clearing: ClearOff, NoSummary: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Window, cfg.OutputReserve, cfg.ProjectDirs = 12_000, 1_000, []string{proj, proj}
			m, _ := newManager(t, cfg)
			st := state(summaryModel(12_000, "SUMMARY\nok"), "s", conversation(10, 6_000, 2))
			for range 2 { // the second call must not duplicate it
				if err := m.BeforeHistory(t.Context(), st); err != nil {
					t.Fatal(err)
				}
			}
			if m.Stats().Compactions == 0 {
				t.Fatal("no compaction")
			}
			mem := memoryMessages(st.Messages)
			if len(mem) != 1 {
				t.Fatalf("%d project-memory messages, want 1", len(mem))
			}
			if st.Messages[1].Content != mem[0].Content || !st.Messages[1].Pinned || st.Messages[1].Role != llm.RoleSystem {
				t.Errorf("project memory is not pinned right after the system prompt")
			}
			if !strings.Contains(mem[0].Content, agents) {
				t.Errorf("AGENTS.md not intact:\n%s", mem[0].Content)
			}
			if st.Messages[0].Content != "You are a test agent." {
				t.Errorf("system prompt moved")
			}
			// Even if something else tampers with it, the next call restores it.
			st.Messages[1].Content = "tampered"
			if err := m.BeforeHistory(t.Context(), st); err != nil {
				t.Fatal(err)
			}
			if mem := memoryMessages(st.Messages); len(mem) != 1 || !strings.Contains(mem[0].Content, agents) {
				t.Errorf("project memory not restored")
			}
			checkPairs(t, st.Messages)
		})
	}
}

// A huge AGENTS.md is clipped at a character boundary, never inside one: the pinned text stays valid UTF-8.
func TestProjectMemoryClippedAtCharacters(t *testing.T) {
	proj := t.TempDir()
	agents := strings.Repeat("上下文", maxProjectMemoryChars) // three bytes a character, three times too long
	if err := os.WriteFile(filepath.Join(proj, "AGENTS.md"), []byte(agents), 0o644); err != nil {
		t.Fatal(err)
	}
	m, _ := newManager(t, Config{ProjectDirs: []string{proj}})
	text, err := m.loadProjectMemory()
	if err != nil {
		t.Fatal(err)
	}
	if !utf8.ValidString(text) {
		t.Fatal("clipped project memory is not valid UTF-8")
	}
	if !strings.Contains(text, strings.Repeat("上下文", maxProjectMemoryChars/3)+"上…") || !strings.Contains(text, "AGENTS.md clipped at 40,000 characters") {
		t.Errorf("project memory not clipped at %d characters", maxProjectMemoryChars)
	}
}

func TestNoProjectMemoryWithoutAgentsFile(t *testing.T) {
	m, _ := newManager(t, Config{ProjectDirs: []string{t.TempDir()}})
	st := state(noCallModel(t, 128_000), "s", conversation(1, 100, 0))
	if err := m.BeforeHistory(t.Context(), st); err != nil {
		t.Fatal(err)
	}
	if len(memoryMessages(st.Messages)) != 0 {
		t.Errorf("no AGENTS.md and no store: nothing to pin")
	}
}

// The memories/ store survives across runs: a later manager over another workspace reads what an earlier one
// wrote.
func TestPersistentMemoryAcrossRuns(t *testing.T) {
	store := t.TempDir()
	m1, _ := newManager(t, Config{MemoryDir: store})
	tools := map[string]agent.Tool{}
	for _, tl := range m1.Tools() {
		tools[tl.Spec().Name] = tl
	}
	for _, n := range []string{"memory_ls", "memory_read", "memory_write", "memory_edit", "memory_glob", "memory_grep"} {
		if tools[n] == nil {
			t.Fatalf("missing tool %s", n)
		}
		if b, ok := tools[n].(agent.BoundedOutput); !ok || !b.BoundsOwnOutput() || !m1.isExempt(n) {
			t.Errorf("%s must bound its own output and be exempt", n)
		}
	}
	args, _ := json.Marshal(map[string]string{"path": "user/preferences.md", "content": "Prefers metric units."})
	if res, err := tools["memory_write"].Run(t.Context(), args); err != nil || res.IsError {
		t.Fatalf("memory_write: %v %s", err, res.Content)
	}
	if _, err := tools["memory_write"].Run(t.Context(), json.RawMessage(`{"path":"../escape.md","content":"x"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(store), "escape.md")); !os.IsNotExist(err) {
		t.Errorf("memory_write escaped its store")
	}

	m2, ws2 := newManager(t, Config{MemoryDir: store}) // a new run, a new workspace
	if _, err := ws2.ReadFile("user/preferences.md"); err == nil {
		t.Errorf("memories must live outside the run's workspace")
	}
	var read agent.Tool
	for _, tl := range m2.Tools() {
		if tl.Spec().Name == "memory_read" {
			read = tl
		}
	}
	res, err := read.Run(t.Context(), json.RawMessage(`{"path":"user/preferences.md"}`))
	if err != nil || !strings.Contains(res.Content, "Prefers metric units.") {
		t.Fatalf("memory_read in a later run: %v %q", err, res.Content)
	}
	st := state(noCallModel(t, 128_000), "s", conversation(1, 100, 0))
	_ = m2.BeforeHistory(t.Context(), st)
	mem := memoryMessages(st.Messages)
	if len(mem) != 1 || !strings.Contains(mem[0].Content, "memory_read") || !strings.Contains(mem[0].Content, "user/") {
		t.Errorf("the pinned note should point to the store and list it: %v", mem)
	}
	if m2.MemoryDir() == "" {
		t.Errorf("MemoryDir empty")
	}
	if _, err := workspace.New(store, workspace.Config{}); err != nil {
		t.Fatal(err)
	}
}

// The memory tools must describe themselves as memory tools, each in its own words first: the model picks tools
// by description, and a shared preamble made all six read alike (and called the store "the workspace").
func TestMemoryToolDescriptionsNameTheStore(t *testing.T) {
	m, _ := newManager(t, Config{MemoryDir: t.TempDir()})
	seen := map[string]string{}
	for _, tl := range m.Tools() {
		s := tl.Spec()
		if strings.Contains(s.Description, "workspace") {
			t.Errorf("%s: description speaks of the workspace: %q", s.Name, s.Description)
		}
		if !strings.Contains(s.Description, "memory store") || !strings.Contains(s.Description, "across runs and sessions") {
			t.Errorf("%s: description does not name the persistent memory store: %q", s.Name, s.Description)
		}
		head := s.Description[:40]
		if other, dup := seen[head]; dup {
			t.Errorf("%s and %s start alike: %q", s.Name, other, head)
		}
		seen[head] = s.Name
	}
	if len(seen) != 6 {
		t.Errorf("got %d memory tools, want 6", len(seen))
	}
}
