package contextmgr

import (
	"fmt"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/scripted"
	"github.com/deepresearch/deepresearch/llm/tokens"
)

// A preset's trigger is a share of the whole window; the output reserve is what is left above it at most.
func TestTriggerIsAShareOfTheWindow(t *testing.T) {
	for _, tc := range []struct {
		preset            string
		window, maxOut    int
		reserve           int
		trigger, trigger2 int
	}{
		{PresetDeepAgents, 16_384, 0, 2_458, 13_926, 0},
		{PresetHybrid, 16_384, 0, 3_277, 13_107, 0},
		{PresetClaudeCode, 16_384, 0, 820, 15_564, 0},
		{PresetHybrid, 200_000, 8_192, 8_192, 160_000, 0},
		{PresetHybrid, 32_768, 1_000, 1_000, 26_214, 0},
	} {
		cfg, _ := Preset(tc.preset)
		m, _ := newManager(t, cfg)
		st := state(scripted.New(llm.Info{Name: "scripted", ContextWindow: tc.window, MaxOutput: tc.maxOut}, nil), "s", nil)
		r := m.Report(st)
		if r.Trigger != tc.trigger || r.Reserve != tc.reserve {
			t.Errorf("%s at %d: trigger %d reserve %d, want %d and %d", tc.preset, tc.window, r.Trigger, r.Reserve, tc.trigger, tc.reserve)
		}
		if !strings.Contains(r.String(), fmt.Sprintf("(%.0f%% of the window", 100*m.Config().Trigger)) {
			t.Errorf("%s: report does not state the trigger as a share:\n%s", tc.preset, r.String())
		}
	}
	// A reserve configured larger than the room above the trigger moves compaction down, and says so.
	cfg, _ := Preset(PresetDeepAgents)
	cfg.OutputReserve = 4_096
	m, _ := newManager(t, cfg)
	r := m.Report(state(scripted.New(llm.Info{Name: "scripted", ContextWindow: 16_384}, nil), "s", nil))
	if r.Trigger != 16_384-4_096 || r.Reserve != 4_096 {
		t.Errorf("explicit reserve: trigger %d reserve %d", r.Trigger, r.Reserve)
	}
}

// The running count follows the history through appends, in-place edits by the manager, a replaced slice and a
// shrink, and always equals a count from scratch.
func TestRunningCountMatchesAFreshCount(t *testing.T) {
	m, _ := newManager(t, Config{Window: 20_000})
	st := state(summaryModel(20_000, "SUMMARY\nshort"), "s", conversation(4, 300, 2))
	fresh := func() int {
		return tokens.CountMessages(tokens.Approx{}, st.Messages) + tokens.CountTools(tokens.Approx{}, st.Tools)
	}
	check := func(when string) {
		t.Helper()
		if got, want := m.Account(st).Total(), fresh(); got != want {
			t.Fatalf("%s: running count %d, fresh count %d", when, got, want)
		}
	}
	check("start")
	st.Messages = append(st.Messages, conversation(3, 500, 0)[2:]...)
	check("appended")
	m.clearOld(st, 1)
	check("cleared in place")
	st.Messages = append([]llm.Message(nil), st.Messages[:5]...)
	check("replaced and shrunk")
	st.Tools = []llm.ToolSpec{{Name: "x", Description: "a tool", Schema: []byte(`{}`)}}
	check("tools changed")
	if _, err := m.Compact(t.Context(), st, ""); err != nil {
		t.Fatal(err)
	}
	check("compacted")
}
