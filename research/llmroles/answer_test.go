package llmroles

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/scripted"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/sources"
)

const shortReport = "# Channels\n\n## Guarantees\n\nA send happens before the receive completes [e1]. Closing a channel is seen by receivers [e2].\n"

func TestDegenerate(t *testing.T) {
	para := "The first item says a send happens before the receive completes [e1]. It also says so again in other words [e2]."
	tests := []struct {
		name string
		in   string
		want bool
	}{
		{"honest report", shortReport, false},
		{"a sentence said twice", shortReport + "\nA send happens before the receive completes [e1].\n", false},
		{"one paragraph until the limit", "# T\n\n" + strings.Repeat(para+"\n\n", 40), true},
		{"one paragraph, cut mid-way", "# T\n\n" + strings.Repeat(para+"\n\n", 12) + "The first item sa", true},
		{"a phrase without sentence ends", "# T\n\nthe channel the channel " + strings.Repeat("and the receive and the send ", 30), true},
		{"one table row over and over", "| a | b |\n|---|---|\n" + strings.Repeat("| send | before receive [e1] |\n", 20), true},
		{"a long report of distinct sentences", longDistinct(200), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := degenerate(tt.in); got != tt.want {
				t.Errorf("degenerate = %v, want %v", got, tt.want)
			}
		})
	}
}

func longDistinct(n int) string {
	var b strings.Builder
	b.WriteString("# Report\n\n")
	for i := range n {
		fmt.Fprintf(&b, "Finding %d holds for kiln %d in season %d [e%d]. ", i, i*7, i%4, i%9+1)
		if i%5 == 4 {
			b.WriteString("\n\n")
		}
	}
	return b.String()
}

func TestDropRepeats(t *testing.T) {
	para := "A send happens before the receive completes [e1]. Closing is seen by receivers [e2]."
	in := "# T\n\n## One\n\n" + para + "\n\n" + para + " A new point [e3].\n\n- " + "Closing is seen by receivers [e2].\n- Lists keep distinct items [e4].\n\n" +
		"| a | b |\n|---|---|\n| x | y |\n| x | y |\n\n```go\nx := 1\nx := 1\n```\n\n## One\n\n" + para + "\n"
	got, n := dropRepeats(in)
	want := "# T\n\n## One\n\n" + para + "\n\nA new point [e3].\n\n- Lists keep distinct items [e4].\n\n" +
		"| a | b |\n|---|---|\n| x | y |\n| x | y |\n\n```go\nx := 1\nx := 1\n```\n\n## One\n"
	if got != want || n != 5 {
		t.Errorf("dropRepeats = %d removed\n%q\nwant 5 removed\n%q", n, got, want)
	}
	if again, n := dropRepeats(got); again != got || n != 0 {
		t.Errorf("dropRepeats is not idempotent: %d more removed", n)
	}
}

func TestShrinkTarget(t *testing.T) {
	plain := &llm.ContextLengthError{Provider: "p", Message: "too long", Sent: 9000}
	stated := &llm.ContextLengthError{Provider: "p", Message: "max 4096", Limit: 4096, Requested: 9000, Sent: 9000}
	// The server counts 20% more tokens than the local counter does.
	denser := &llm.ContextLengthError{Provider: "p", Message: "max 4096", Limit: 4096, Requested: 10800, Sent: 9000}
	tests := []struct {
		name     string
		err      error
		material int
		reserve  int
		ok       bool
		check    func(int) bool
	}{
		{"nothing stated: half", plain, 8000, 0, true, func(n int) bool { return n == 4000 }},
		{"window stated: what fits", stated, 8000, 512, true, func(n int) bool { return n+1000+512 <= 4096 && n > 1500 }},
		{"server counts denser", denser, 8000, 512, true, func(n int) bool { return float64(n+1000)*1.2+512 <= 4096 }},
		{"wrapped error", fmt.Errorf("llmroles: verifier: %w", stated), 8000, 512, true, func(n int) bool { return n < 3000 }},
		{"limit above the request: half", &llm.ContextLengthError{Limit: 100_000, Sent: 9000}, 8000, 0, true, func(n int) bool { return n == 4000 }},
		{"floor", plain, 400, 0, false, nil},
		{"window too small for the overhead", &llm.ContextLengthError{Limit: 1200, Sent: 9000}, 8000, 0, false, nil},
		{"not a context-length error", errors.New("boom"), 8000, 0, true, func(n int) bool { return n == 4000 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, ok := shrinkTarget(tt.err, tt.material, tt.reserve)
			if ok != tt.ok {
				t.Fatalf("shrinkTarget ok = %v (%d), want %v", ok, n, tt.ok)
			}
			if ok && (n >= tt.material || !tt.check(n)) {
				t.Errorf("shrinkTarget = %d for %d tokens of material", n, tt.material)
			}
		})
	}
}

// poolOf builds n evidence items for the test plan's first sub-question, each about 40 tokens.
func poolOf(n int) []research.Evidence {
	var pool []research.Evidence
	for i := range n {
		pool = append(pool, research.Evidence{ID: fmt.Sprintf("e%d", i+1), SubQuestion: "q1", Source: fmt.Sprintf("https://x.example/%d", i),
			Claim: fmt.Sprintf("Claim %d about the treaty of 1648.", i), Quote: fmt.Sprintf("The treaty of 1648 is described in passage number %d of the source text.", i), Confidence: 0.7})
	}
	return pool
}

// TestContextRecoveryConverges: a server whose real window is far below what the model claims refuses the
// verifier's and the synthesizer's requests; every request sent after a refusal is strictly smaller than the one
// refused, none is sent twice, and the stage succeeds once the request fits — whether the server states its
// window or not.
func TestContextRecoveryConverges(t *testing.T) {
	for _, stated := range []bool{false, true} {
		for _, role := range []string{RoleVerifier, RoleSynthesizer} {
			t.Run(fmt.Sprintf("%s/stated=%v", role, stated), func(t *testing.T) {
				const window = 1500
				var mu sync.Mutex
				var sizes, refusedAt []int
				refused := map[string]bool{}
				m := scripted.New(llm.Info{Name: "claims-a-big-window", ContextWindow: 128_000}, func(_ context.Context, req *llm.Request) (*llm.Response, error) {
					var pb strings.Builder
					for _, msg := range req.Messages {
						pb.WriteString(string(msg.Role) + ": " + msg.Content + "\n")
					}
					prompt := pb.String()
					n := len(prompt) / 4
					mu.Lock()
					defer mu.Unlock()
					sizes = append(sizes, n)
					if refused[prompt] {
						t.Errorf("a refused request was sent again (%d tokens)", n)
					}
					if n > window {
						refused[prompt] = true
						refusedAt = append(refusedAt, len(sizes)-1)
						cle := &llm.ContextLengthError{Provider: "test", Message: "prompt too long"}
						if stated {
							cle.Limit, cle.Requested = window, n
						}
						return nil, cle
					}
					if role == RoleVerifier {
						return scripted.Reply(`{"pass": true}`), nil
					}
					return scripted.Reply("# Treaty\n\n## When\n\nThe treaty dates from 1648 [e1].\n"), nil
				})
				roles := New(Config{Verifier: m, Synthesizer: m, Logger: quietLogger()})
				var err error
				if role == RoleVerifier {
					_, err = roles.Verifier.Verify(t.Context(), testPlan, poolOf(80))
				} else {
					_, err = roles.Synthesizer.Synthesize(t.Context(), research.SynthesisInput{Plan: testPlan, Evidence: poolOf(80)})
				}
				if err != nil {
					t.Fatalf("%s failed: %v (sizes %v)", role, err, sizes)
				}
				if len(refusedAt) == 0 {
					t.Fatalf("no refusal happened: sizes %v", sizes)
				}
				for _, i := range refusedAt {
					if i+1 < len(sizes) && sizes[i+1] >= sizes[i] {
						t.Errorf("request %d (%d tokens) is not smaller than the refused one before it (%d): %v", i+2, sizes[i+1], sizes[i], sizes)
					}
				}
				if stated && len(refusedAt) > 2 {
					t.Errorf("with the window stated, %d refusals before it fit: %v", len(refusedAt), sizes)
				}
				t.Logf("request sizes: %v", sizes)
			})
		}
	}
}

// TestContextRecoveryStopsAtTheFloor: a window too small for anything is not retried forever, nor with the
// same request.
func TestContextRecoveryStopsAtTheFloor(t *testing.T) {
	var sizes []int
	m := scripted.New(llm.Info{Name: "tiny", ContextWindow: 128_000}, func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		sizes = append(sizes, len(lastUser(req)))
		return nil, &llm.ContextLengthError{Provider: "test", Message: "no room", Limit: 100}
	})
	_, err := New(Config{Verifier: m, Logger: quietLogger()}).Verifier.Verify(t.Context(), testPlan, poolOf(80))
	if !llm.IsContextLength(err) {
		t.Fatalf("err = %v, want the context-length error", err)
	}
	if len(sizes) > maxShrink+1 {
		t.Errorf("%d requests for a window that fits nothing", len(sizes))
	}
	for i := 1; i < len(sizes); i++ {
		if sizes[i] >= sizes[i-1] {
			t.Errorf("sizes do not decrease: %v", sizes)
		}
	}
}

// TestRunFillsTheMeasuredSize: a provider that states nothing still yields a context-length error carrying the
// refused request's locally counted size, for the caller to shrink by.
func TestRunFillsTheMeasuredSize(t *testing.T) {
	m := scripted.New(llm.Info{Name: "test-model"}, func(context.Context, *llm.Request) (*llm.Response, error) {
		return nil, &llm.ContextLengthError{Provider: "test", Message: "too long"}
	})
	_, err := RunText(t.Context(), RoleSpec{Name: "r", Model: m, System: "s"}, strings.Repeat("word ", 2000))
	var cle *llm.ContextLengthError
	if !errors.As(err, &cle) || cle.Sent < 1000 {
		t.Fatalf("err = %v (Sent %d), want a context-length error with the measured size", err, sentTokens(err))
	}
}

// TestReaskThatOverflowsIsAskedAfresh: a re-ask that does not fit with the unusable answer in the conversation
// is sent again without it — smaller, not the same.
func TestReaskThatOverflowsIsAskedAfresh(t *testing.T) {
	var sizes []int
	calls := 0
	m := scripted.New(llm.Info{Name: "test-model"}, func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		calls++
		n := 0
		for _, msg := range req.Messages {
			n += len(msg.Content)
		}
		sizes = append(sizes, n)
		switch calls {
		case 1:
			return scripted.Reply("not json " + strings.Repeat("blah ", 3000)), nil
		case 2:
			return nil, &llm.ContextLengthError{Provider: "test", Message: "too long"}
		}
		return scripted.Reply(`{"name": "ok", "score": 1}`), nil
	})
	got, err := RunRole[answer](t.Context(), RoleSpec{Name: "r", Model: m}, "Give a name.")
	if err != nil || got.Name != "ok" {
		t.Fatalf("RunRole = %+v, %v", got, err)
	}
	if len(sizes) != 3 || sizes[2] >= sizes[1] {
		t.Errorf("request sizes %v: the fresh re-ask must be smaller than the refused one", sizes)
	}
}

// TestDegenerateDraftIsNotContinued: a synthesizer looping until the output limit is not asked to continue; its
// repeats are removed and the draft says it was stopped.
func TestDegenerateDraftIsNotContinued(t *testing.T) {
	para := "The treaty dates from 1648 [e1]. It ended a long war [e2]."
	loop := "# Treaty\n\n## When\n\n" + strings.Repeat(para+"\n\n", 50)
	calls := 0
	m := scripted.New(llm.Info{Name: "test-model"}, func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		calls++
		if strings.Contains(lastUser(req), "Continue exactly") {
			t.Error("a degenerate draft was continued")
		}
		return &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Content: loop}, StopReason: llm.StopMaxTokens}, nil
	})
	plan := &research.Plan{Question: "When was the treaty?", Language: "en", SubQuestions: []research.SubQuestion{{ID: "q1", Question: "When?"}}}
	d, err := New(Config{Synthesizer: m, Logger: quietLogger()}).Synthesizer.Synthesize(t.Context(), research.SynthesisInput{Plan: plan, Evidence: poolOf(2)})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 1 || d.Loops != 1 || d.Repeats < 90 || strings.Count(d.Markdown, "dates from 1648") != 1 {
		t.Errorf("%d calls, degenerate %v, %d repeats, draft:\n%s", calls, d.Loops, d.Repeats, d.Markdown)
	}
}

// TestAnalystReadsEachWindowOnce: a document several sub-questions read is sent to the model once, asked about
// every sub-question of the plan; each sub-question gets the items that answer it.
func TestAnalystReadsEachWindowOnce(t *testing.T) {
	doc := &sources.Document{URL: "https://example.org/westphalia", Title: "Westphalia", Text: groundDoc}
	calls := 0
	var prompts []string
	m := scripted.New(llm.Info{Name: "test-model"}, func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		calls++
		prompts = append(prompts, lastUser(req))
		return scripted.Reply(`{"evidence": [
			{"sub_question": "q1", "claim": "Signed in 1648", "quote": "The Treaty of Westphalia was signed in 1648.", "confidence": 0.9},
			{"sub_question": "q2", "claim": "Historians disagree", "quote": "Historians disagree about its long-term effects on state sovereignty.", "confidence": 0.6}]}`), nil
	})
	roles := New(Config{Planner: m, Analyst: m, Logger: quietLogger()})
	roles.Analyst.(*Analyst).s.reads.know(testPlan.SubQuestions...)
	var got [2][]research.Evidence
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ev, err := roles.Analyst.Analyze(t.Context(), testPlan.SubQuestions[i], doc)
			if err != nil {
				t.Error(err)
			}
			got[i] = ev
		}()
	}
	wg.Wait()
	if calls != 1 {
		t.Fatalf("%d analyst calls for one window read by two sub-questions", calls)
	}
	if !strings.Contains(prompts[0], "Other sub-question") {
		t.Errorf("the read was not asked about the other sub-questions:\n%s", prompts[0])
	}
	if len(got[0]) != 1 || len(got[1]) != 1 || got[0][0].SubQuestion != "q1" || got[1][0].SubQuestion != "q2" ||
		!strings.Contains(got[1][0].Quote, "Historians") {
		t.Errorf("items not shared by sub-question: %+v / %+v", got[0], got[1])
	}
}
