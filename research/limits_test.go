package research

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func TestBudgetValidate(t *testing.T) {
	tests := []struct {
		name string
		b    Budget
		want string // "" means valid
	}{
		{"zero means defaults", Budget{}, ""},
		{"ordinary", Budget{MaxCostUSD: 1.5, MaxTokens: 1e6, MaxTime: 5 * time.Minute, Concurrency: 4, MaxCalls: 100, Retries: -1}, ""},
		{"negative cost", Budget{MaxCostUSD: -1}, "cost limit -1"},
		{"NaN cost", Budget{MaxCostUSD: math.NaN()}, "cost limit NaN"},
		{"infinite cost", Budget{MaxCostUSD: math.Inf(1)}, "cost limit +Inf"},
		{"huge cost", Budget{MaxCostUSD: 1e308}, "cost limit"},
		{"negative tokens", Budget{MaxTokens: -1}, "token fuse -1"},
		{"negative time", Budget{MaxTime: -5 * time.Minute}, "time limit -5m0s"},
		{"eight days", Budget{MaxTime: 8 * 24 * time.Hour}, "time limit 192h0m0s"},
		{"negative stage timeout", Budget{StageTimeout: -time.Second}, "stage timeout"},
		{"negative concurrency", Budget{Concurrency: -2}, "concurrency -2"},
		{"negative call cap", Budget{MaxCalls: -2}, "call cap -2"},
	}
	for _, tt := range tests {
		err := tt.b.Validate()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, ErrBadInput)):
			t.Errorf("%s: err = %v, want ErrBadInput mentioning %q", tt.name, err, tt.want)
		}
	}
}

func TestMinutes(t *testing.T) {
	if d, err := Minutes(1.5); err != nil || d != 90*time.Second {
		t.Errorf("Minutes(1.5) = %v, %v", d, err)
	}
	if d, err := Minutes(0); err != nil || d != 0 {
		t.Errorf("Minutes(0) = %v, %v", d, err)
	}
	for _, m := range []float64{-5, math.NaN(), math.Inf(1), math.Inf(-1), 1e308, MaxTimeLimit.Minutes() + 1} {
		if d, err := Minutes(m); !errors.Is(err, ErrBadInput) {
			t.Errorf("Minutes(%v) = %v, %v; want ErrBadInput", m, d, err)
		}
	}
}

func TestCheckQuestion(t *testing.T) {
	ok := []string{"Why?", strings.Repeat("字", MaxQuestionRunes), "  padded  "}
	bad := map[string]string{
		"":                                      "empty",
		"   \n\t":                               "empty",
		strings.Repeat("a", MaxQuestionRunes+1): "has 4001 characters",
		strings.Repeat("why ", 1<<18):           "the limit is 4000",
		"bad \xff bytes":                        "UTF-8",
		strings.Repeat("字", MaxQuestionRunes) + "x": "has 4001 characters",
	}
	for _, q := range ok {
		if err := CheckQuestion(q); err != nil {
			t.Errorf("CheckQuestion(%.20q): %v", q, err)
		}
	}
	for q, want := range bad {
		if err := CheckQuestion(q); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckQuestion(%.20q) = %v, want %q", q, err, want)
		}
	}
}

// A runaway plan (model output) is bounded: at most MaxSubQuestions sub-questions of MaxQueries queries each,
// every query and sub-question clipped.
func TestRunawayPlanIsBounded(t *testing.T) {
	var in Plan
	long, query := strings.Repeat("why ", 5000), strings.Repeat("term ", 10000)
	for range 50 {
		sq := SubQuestion{Question: long}
		for range 1000 {
			sq.Queries = append(sq.Queries, query)
		}
		in.SubQuestions = append(in.SubQuestions, sq)
	}
	// Each depth bounds a plan by its own range; a plan the person wrote or edited by the graph's maxima.
	std, _ := DepthOf(DepthStandard)
	for _, d := range append(Depths(), personLimits(std)) {
		p, notes := normalizePlan(&in, "Why?", d)
		wantSQ, wantQ := min(d.MaxSubQuestions, MaxSubQuestions), min(d.Queries, MaxQueries)
		if len(p.SubQuestions) != wantSQ || len(notes) == 0 {
			t.Fatalf("%s: %d sub-questions, want %d; notes %v", d.Name, len(p.SubQuestions), wantSQ, notes)
		}
		for _, sq := range p.SubQuestions {
			if len(sq.Queries) != wantQ || len([]rune(sq.Question)) > MaxQuestionRunes+1 {
				t.Fatalf("%s: sub-question %s: %d queries (want %d), %d characters", d.Name, sq.ID, len(sq.Queries), wantQ, len([]rune(sq.Question)))
			}
			for _, q := range sq.Queries {
				if len([]rune(q)) > maxQueryRunes+1 {
					t.Fatalf("a query of %d characters", len([]rune(q)))
				}
			}
		}
	}
}

// One limit on extra rounds for every surface: up to MaxRounds pass (negative means none), one past it is refused.
func TestCheckRounds(t *testing.T) {
	for n, ok := range map[int]bool{0: true, 1: true, MaxRounds: true, MaxRounds + 1: false, -1: true, 1000: false} {
		err := CheckRounds(n)
		if (err == nil) != ok || (err != nil && !errors.Is(err, ErrBadInput)) {
			t.Errorf("CheckRounds(%d) = %v, want ok=%v", n, err, ok)
		}
	}
}
