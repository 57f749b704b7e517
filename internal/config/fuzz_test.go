package config_test

import (
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/internal/config"
)

// FuzzParse feeds arbitrary configuration files (a folder someone else wrote may hold one): no panic, and a file
// that parses has research limits that validate and shows without error.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"model:\n  provider: openai\n  model: gpt-4.1\n  base_url: https://u:k@h/v1\n",
		"research:\n  max_cost_usd: .nan\n", "research:\n  max_time: -5m\n", "modle: typo\n",
		"a: &a [*a, *a]\n", "tiers:\n  fast: {model: m}\nmodels:\n  m: {context_window: 32768}\n", "", "---\n---\n",
		"subagents:\n  - name: scout\n    tools: grep\n", "context:\n  trigger: 1e308\n",
		"x: " + strings.Repeat("[", 200) + strings.Repeat("]", 200) + "\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		c, err := config.Parse([]byte(data), "fuzz.yaml")
		if err != nil {
			return
		}
		if err := c.Research.Validate(); err != nil {
			t.Fatalf("Parse accepted invalid limits: %v", err)
		}
		if _, err := c.Show(); err != nil {
			t.Fatalf("Show: %v", err)
		}
	})
}
