package cli_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/internal/cli"
	"github.com/deepresearch/deepresearch/llm/llmtest"
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

// models --probe says, per tier, whether the server reports usage: a server that does not gets its tokens counted
// here, and the output says those figures are estimated.
func TestModelsProbeSaysWhenUsageIsEstimated(t *testing.T) {
	_, configFile := askEnv(t)
	var noUsage, withUsage llmtest.Dialect
	for _, d := range llmtest.Dialects() {
		switch {
		case d.NoUsage:
			noUsage = d
		case d.Name == "vllm":
			withUsage = d
		}
	}
	for _, tc := range []struct {
		d    llmtest.Dialect
		want []string
	}{
		{noUsage, []string{"reports no usage", "marked estimated"}},
		{withUsage, []string{"reports usage (40 in, 2 out)", "reasoning kept apart"}},
	} {
		srv := llmtest.NewServer(t, tc.d.Answer("ready", "The user wants one word.", nil, llmtest.Usage{Input: 40, Output: 2}))
		var stdout, stderr bytes.Buffer
		code := cli.Main(t.Context(), []string{"models", "--probe", "--config", configFile, "--provider", "openai",
			"--base-url", srv.URL + "/v1", "--model", "local-model"}, strings.NewReader(""), &stdout, &stderr, fakeEnv(nil))
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.d.Name, code, stderr.String())
		}
		for _, w := range tc.want {
			if !strings.Contains(stdout.String(), w) {
				t.Errorf("%s: output lacks %q:\n%s", tc.d.Name, w, stdout.String())
			}
		}
		if srv.Calls() == 0 {
			t.Errorf("%s: no probe was sent", tc.d.Name)
		}
	}
}
