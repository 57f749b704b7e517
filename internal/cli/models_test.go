package cli_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/internal/cli"
)

// models says where each figure comes from and of when, and how to correct it.
func TestModelsShowWhereFiguresComeFrom(t *testing.T) {
	_, configFile := askEnv(t)
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--provider", "deepseek", "--model", "deepseek-flash"},
			[]string{"1000000", "1.127", "AS OF", "2026-11", "figures from https://api-docs.deepseek.com", "converted from CNY", "models.<name>"}},
		{[]string{"--provider", "qwen", "--model", "qwen-max"},
			[]string{"32768", "6.4", "alibabacloud.com", "first input tier"}},
		{[]string{"--provider", "openai", "--model", "gpt-4.1"},
			[]string{"figures from charm.land/catwalk"}},
	} {
		var stdout, stderr bytes.Buffer
		code := cli.Main(t.Context(), append([]string{"models", "--config", configFile}, tc.args...),
			strings.NewReader(""), &stdout, &stderr, fakeEnv(nil))
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.args, code, stderr.String())
		}
		for _, w := range tc.want {
			if !strings.Contains(stdout.String(), w) {
				t.Errorf("%v: output lacks %q:\n%s", tc.args, w, stdout.String())
			}
		}
	}
}
