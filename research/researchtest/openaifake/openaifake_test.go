package openaifake_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/openai"
	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/llmroles"
	"github.com/deepresearch/deepresearch/research/publish"
	"github.com/deepresearch/deepresearch/research/researchtest/openaifake"
	"github.com/deepresearch/deepresearch/sources"
)

func newModel(t *testing.T, srv *openaifake.Server, key string) *openai.Model {
	t.Helper()
	m, err := openai.New(openai.Config{Model: "fake-research", BaseURL: srv.BaseURL(), APIKey: key})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

const analystPrompt = "Sub-question q1: How are the fans used?\n\n"

func analystRequest(stream func(string)) *llm.Request {
	doc := &sources.Document{URL: "https://example.org/kiln", Title: "Kiln",
		Text: "# Kiln\n\nTwo roof fans push the warm air through the stack. The glazing is polycarbonate.\n"}
	return &llm.Request{OnText: stream, JSON: true, Messages: []llm.Message{
		{Role: llm.RoleSystem, Content: "You are an analyst of a deep-research system. Extract evidence."},
		{Role: llm.RoleUser, Content: analystPrompt + sources.WrapUntrusted(doc)},
	}}
}

// The same answer arrives whole or streamed, with usage either way.
func TestStreamingAndPlainAnswersAgree(t *testing.T) {
	srv := openaifake.New(t, openaifake.Config{APIKey: "k1",
		SubQuestions: []openaifake.SubQuestion{{Question: "How are the fans used?", Keywords: []string{"fans"}}}})
	m := newModel(t, srv, "k1")
	plain, err := m.Generate(t.Context(), analystRequest(nil))
	if err != nil {
		t.Fatal(err)
	}
	var deltas []string
	streamed, err := m.Generate(t.Context(), analystRequest(func(d string) { deltas = append(deltas, d) }))
	if err != nil {
		t.Fatal(err)
	}
	if plain.Message.Content != streamed.Message.Content || strings.Join(deltas, "") != plain.Message.Content {
		t.Fatalf("plain %q\nstreamed %q\ndeltas %q", plain.Message.Content, streamed.Message.Content, deltas)
	}
	if len(deltas) < 2 {
		t.Fatalf("answer not streamed in pieces: %q", deltas)
	}
	var got struct {
		Evidence []struct{ Claim, Quote string } `json:"evidence"`
	}
	if err := json.Unmarshal([]byte(plain.Message.Content), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Evidence) != 1 || got.Evidence[0].Quote != "Two roof fans push the warm air through the stack." {
		t.Fatalf("evidence %+v", got.Evidence)
	}
	for _, r := range []*llm.Response{plain, streamed} {
		if r.Usage.InputTokens <= 0 || r.Usage.OutputTokens <= 0 {
			t.Fatalf("usage not reported: %+v", r.Usage)
		}
	}
	calls := srv.Calls()
	if len(calls) != 2 || calls[0].Stream || !calls[1].Stream || calls[0].Role != openaifake.RoleAnalyst ||
		!calls[0].JSONMode || calls[0].SubQuestion != "q1" || calls[0].Auth != "Bearer k1" {
		t.Fatalf("calls %+v", calls)
	}
	p, c := srv.Usage()
	if p != plain.Usage.InputTokens+streamed.Usage.InputTokens || c != plain.Usage.OutputTokens+streamed.Usage.OutputTokens {
		t.Fatalf("server usage %d/%d, client saw %+v and %+v", p, c, plain.Usage, streamed.Usage)
	}
}

func TestWrongKeyAndUnknownRoleAreRefused(t *testing.T) {
	srv := openaifake.New(t, openaifake.Config{APIKey: "right"})
	if _, err := newModel(t, srv, "wrong").Generate(t.Context(), analystRequest(nil)); err == nil {
		t.Fatal("a wrong key was accepted")
	}
	_, err := newModel(t, srv, "right").Generate(t.Context(), &llm.Request{Messages: []llm.Message{
		{Role: llm.RoleSystem, Content: "You are a poet."}, {Role: llm.RoleUser, Content: "Write."}}})
	if err == nil || !strings.Contains(err.Error(), "cannot tell which research role") {
		t.Fatalf("unknown role: %v", err)
	}
}

// A held server answers nothing until released; a client that gives up while held gets its own error.
func TestHoldKeepsAnswersUntilReleased(t *testing.T) {
	srv := openaifake.New(t, openaifake.Config{})
	release := srv.Hold()
	answered := make(chan error, 1)
	go func() {
		_, err := newModel(t, srv, "").Generate(t.Context(), analystRequest(nil))
		answered <- err
	}()
	select {
	case err := <-answered:
		t.Fatalf("a held server answered: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	release()
	release() // a second release does nothing
	select {
	case err := <-answered:
		if err != nil {
			t.Fatalf("after release: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("no answer after release")
	}
	release = srv.Hold()
	defer release()
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	if _, err := newModel(t, srv, "").Generate(ctx, analystRequest(nil)); err == nil {
		t.Fatal("a held request that gave up succeeded")
	}
}

// Through the real LLM roles: the malformed plan is repaired without a re-ask; the verifier reports the
// configured gap once, then passes; the synthesizer cites exactly the pool it was given.
func TestRolesThroughLLMRoles(t *testing.T) {
	srv := openaifake.New(t, openaifake.Config{MalformedPlan: true, GapSubQuestion: 3, GapQueries: []string{"running cost"},
		SubQuestions: []openaifake.SubQuestion{
			{Question: "How does it work?", Queries: []string{"kiln design"}, Keywords: []string{"fans"}},
			{Question: "How fast is it?", Queries: []string{"kiln speed"}, Keywords: []string{"days"}},
			{Question: "What does it cost?", Queries: []string{"kiln cost"}, Keywords: []string{"euros"}},
		}})
	m := newModel(t, srv, "")
	roles := llmroles.New(llmroles.Config{Planner: m, Searcher: m, Analyst: m, Verifier: m, Synthesizer: m})
	plan, err := roles.Planner.Plan(t.Context(), "How good is the Kestrel kiln?")
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.SubQuestions) != 3 || plan.SubQuestions[1].Question != "How fast is it?" || srv.Count(openaifake.RolePlanner) != 1 {
		t.Fatalf("plan %+v after %d planner calls", plan, srv.Count(openaifake.RolePlanner))
	}
	for i := range plan.SubQuestions {
		plan.SubQuestions[i].ID = []string{"q1", "q2", "q3"}[i]
	}
	pool := []research.Evidence{
		{ID: "e1", SubQuestion: "q1", Claim: "Two fans move the air.", Quote: "Two fans move the air.", Source: "https://a.example/x", Confidence: 0.8},
		{ID: "e2", SubQuestion: "q3", Claim: "It costs 2,400 euros.", Quote: "It costs 2,400 euros.", Source: "https://a.example/y", Confidence: 0.8},
	}
	v1, err := roles.Verifier.Verify(t.Context(), plan, pool)
	if err != nil {
		t.Fatal(err)
	}
	if v1.Pass || len(v1.Gaps) != 1 || v1.Gaps[0].SubQuestion != "q3" || v1.Gaps[0].Queries[0] != "running cost" {
		t.Fatalf("first verdict %+v", v1)
	}
	v2, err := roles.Verifier.Verify(t.Context(), plan, pool)
	if err != nil || !v2.Pass {
		t.Fatalf("second verdict %+v, %v", v2, err)
	}
	d, err := roles.Synthesizer.Synthesize(t.Context(), research.SynthesisInput{Plan: plan, Evidence: pool, Verdict: v2})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Two fans move the air. [e1]", "It costs 2,400 euros. [e2]", "## How does it work?"} {
		if !strings.Contains(d.Markdown, want) {
			t.Errorf("draft lacks %q:\n%s", want, d.Markdown)
		}
	}
	if problems := publish.CheckIntegrity(d.Markdown, func(id string) error { return nil }); len(problems) != 0 {
		t.Fatalf("draft has uncited sentences: %v\n%s", problems, d.Markdown)
	}
}
