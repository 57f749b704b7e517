package researchtest

import (
	"fmt"
	"strings"
	"time"

	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/research"
)

// WorldQuestion is the question a World's plan answers.
const WorldQuestion = "What is known about alpha, bravo and charlie?"

// World is a small research world for the tests of durable runs: three sub-questions (alpha, bravo, charlie)
// with four pages each and a deep dive each on a local site, and a verifier whose first verdict sends q1 back
// to search for the alpha deep dive. The verdict depends on the pool only, so every worker's roles built from
// one World answer alike although they keep nothing between steps.
type World struct {
	Site *Site
	Plan research.Plan
	// Fail, when set, sees every role call before the model is asked (Roles.Fail).
	Fail func(role, key string) error
}

// NewWorld serves the world's site on a loopback server. Close the Site when done.
func NewWorld() *World {
	w := &World{Plan: research.Plan{Language: "en"}}
	var pages []Page
	for i, topic := range []string{"alpha", "bravo", "charlie"} {
		w.Plan.SubQuestions = append(w.Plan.SubQuestions, research.SubQuestion{ID: fmt.Sprintf("q%d", i+1),
			Question: "What is known about " + topic + "?", Queries: []string{topic + " facts"}})
		for j := range 4 {
			pages = append(pages, Page{Path: fmt.Sprintf("/%s/%d", topic, j), Title: fmt.Sprintf("%s facts %d", topic, j),
				Body: fmt.Sprintf("The %s facts page %d reports a value of %d units. Observers of %s noted trend %d in the series.", topic, j, 10*i+j, topic, j)})
		}
		pages = append(pages, Page{Path: "/" + topic + "/deep", Title: topic + " deep dive",
			Body: fmt.Sprintf("The %s deep dive covers the missing details of %s in full.", topic, topic)})
	}
	w.Site = NewSite(pages)
	return w
}

// Config is one worker's configuration over the world: a fresh scripted role set (5 ms a model call, 4 results a
// query) with its own ledger, the site's fetcher, and no early stop.
func (w *World) Config() research.Config {
	ledger := &llm.Ledger{}
	roles := &Roles{Site: w.Site, Plan: w.Plan, Ledger: ledger, PerQuery: 4}
	roles.NewModel(5 * time.Millisecond)
	roles.Fail = w.Fail
	roles.Verify = func(_ int, _ *research.Plan, pool []research.Evidence) research.Verdict {
		for _, e := range pool {
			if strings.HasSuffix(e.Source, "/alpha/deep") {
				return research.Verdict{Pass: true}
			}
		}
		return research.Verdict{Gaps: []research.Gap{{SubQuestion: "q1", Missing: "details", Queries: []string{"alpha deep dive"}}}}
	}
	return research.Config{Roles: roles.Set(), Fetcher: w.Site.Fetcher(), Ledger: ledger, EarlyStopWindow: -1}
}
