package extractive

import "testing"

func TestDetectConflict(t *testing.T) {
	tests := []struct {
		a, b string
		want string // "" for no conflict
	}{
		{"DeepAgent triggers context compaction when the context reaches 85% of the window.",
			"DeepAgent triggers context compaction when the context reaches 95% of the window.", conflictNumber},
		{"GODEBUG settings added for compatibility are maintained for a minimum of two years.",
			"GODEBUG settings added for compatibility are maintained for a minimum of two years.", ""},
		{"The release of Go 1.21 shipped in August 2023 with the panicnil setting.",
			"The release of Go 1.21 shipped in August 2024 with the panicnil setting.", conflictDate},
		{"A send on a buffered channel blocks until the receiver is ready.",
			"A send on a buffered channel does not block until the receiver is ready.", conflictNegation},
		{"A send on a channel is synchronized before the receive completes.",
			"Modules declare their dependencies in go.mod files.", ""},
		{"Claude Code 的压缩触发时机是上下文达到 95%。", "Claude Code 的压缩触发时机是上下文达到 85%。", conflictNumber},
		{"子 Agent 可以访问父 Agent 的内部状态。", "子 Agent 无法访问父 Agent 的内部状态。", conflictNegation},
		{"两者的压缩方式不同，DeepAgent 写入文件。", "两者的压缩方式，DeepAgent 写入文件。", ""}, // 不同 is not a negation
		// One side only adds a figure: not a contradiction.
		{"The limit is 16 concurrent calls per run.", "The limit is 16 concurrent calls and 1000 calls per run.", ""},
	}
	for _, tt := range tests {
		kind, ok := detectConflict(tt.a, tt.b)
		if (tt.want != "") != ok || kind != tt.want {
			t.Errorf("detectConflict(%q, %q) = %q, %v; want %q", tt.a, tt.b, kind, ok, tt.want)
		}
	}
}
