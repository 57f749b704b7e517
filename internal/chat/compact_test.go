package chat

import (
	"bytes"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/llm"
)

// /compact used to print the context manager's line twice: once from the compaction event and once as the
// command's answer. Each outcome must appear exactly once.
func TestCompactPrintsItsOutcomeOnce(t *testing.T) {
	f := newFixture(t)
	var out bytes.Buffer
	cfg := f.config(nil, nil, "", nil, &llm.Ledger{})
	cfg.In = strings.NewReader("What files are in the workspace?\nhello again\n/compact keep the file names\n/exit\n")
	cfg.Out = &out
	if err := Run(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	if n := strings.Count(text, "context compacted (manual"); n != 1 {
		t.Errorf("the compaction line appears %d times, want 1:\n%s", n, text)
	}
}
