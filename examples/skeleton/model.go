package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/scripted"
)

// offlineModel answers each role of the skeleton from a tiny built-in "web", so the example runs with no network
// and no API key. The first verification finds a gap; the re-search fills it; the second passes.
func offlineModel() llm.Model {
	web := map[string]evidence{
		"channels communicate": {Claim: "Channels let goroutines communicate.", Quote: "Do not communicate by sharing memory; instead, share memory by communicating.", Source: "https://go.dev/doc/effective_go#sharing"},
		"channels synchronize": {Claim: "An unbuffered send waits for the receiver.", Quote: "If the channel is unbuffered, the sender blocks until the receiver has received the value.", Source: "https://go.dev/doc/effective_go#channels"},
		"memory model":         {Claim: "A send happens before the matching receive completes.", Quote: "A send on a channel is synchronized before the completion of the corresponding receive from that channel.", Source: "https://go.dev/ref/mem#chan"},
	}
	return scripted.New(llm.Info{Name: "offline"}, func(_ context.Context, req *llm.Request) (*llm.Response, error) {
		prompt := llm.Text(req.Messages, llm.RoleUser)
		prompt, _, _ = strings.Cut(prompt, "\n\nReply with a single JSON") // the schema llmroles.RunRole appends
		var out any
		switch {
		case strings.HasPrefix(prompt, "Split into"):
			out = plan{Queries: []string{"channels communicate", "channels synchronize"}}
		case strings.HasPrefix(prompt, "Search and extract"):
			q := prompt[strings.LastIndex(prompt, ": ")+2:]
			out = []evidence{web[q]}
		case strings.HasPrefix(prompt, "You are an independent verifier"):
			if strings.Contains(prompt, "go.dev/ref/mem") {
				out = verdict{Pass: true}
			} else {
				out = verdict{Gaps: []string{"memory model"}}
			}
		case strings.HasPrefix(prompt, "Write the report"):
			var pool []evidence
			_ = json.Unmarshal([]byte(prompt[strings.Index(prompt, "["):]), &pool)
			var b strings.Builder
			b.WriteString("# Why Go programs use channels\n\n")
			for i, e := range pool {
				fmt.Fprintf(&b, "%s [%d]\n", e.Claim, i+1)
			}
			b.WriteString("\n## Sources\n\n")
			for i, e := range pool {
				fmt.Fprintf(&b, "%d. %s — “%s”\n", i+1, e.Source, e.Quote)
			}
			out = report{Markdown: b.String()}
		default:
			return nil, fmt.Errorf("offline model: unexpected prompt %.40q", prompt)
		}
		b, err := json.Marshal(out)
		return scripted.Reply(string(b)), err
	})
}
