package cli

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
)

// After Ctrl-C (the command's context ends) the interrupted steps' log lines stay off the terminal.
func TestCalmLogAfterInterrupt(t *testing.T) {
	var buf bytes.Buffer
	ctx, cancel := context.WithCancel(t.Context())
	log := slog.New(&calmLog{Handler: slog.NewTextHandler(&buf, nil), ctx: ctx}).With("run", "r1")
	log.Error("fetch failed", "err", "timeout")
	log.Warn("the model's context window is unknown (not in the catalogue or the configuration); assuming 32,000 tokens")
	cancel()
	log.Error("state: add evidence", "err", context.Canceled)
	out := buf.String()
	if !strings.Contains(out, "fetch failed") || strings.Contains(out, "add evidence") || strings.Contains(out, "context window") {
		t.Errorf("log after interrupt:\n%s", out)
	}
}
