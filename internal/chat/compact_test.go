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
	// The answer to the long line is long enough that a summary makes the context smaller (a compaction that
	// would not is refused with "nothing to gain").
	long := strings.Repeat("hello again ", 400)
	cfg.In = strings.NewReader(long + "\nWhat files are in the workspace?\n/compact keep the file names\n/exit\n")
	cfg.Out = &out
	if err := Run(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	if n := strings.Count(text, "context compacted (manual"); n != 1 {
		t.Errorf("the compaction line appears %d times, want 1:\n%s", n, text)
	}
}
