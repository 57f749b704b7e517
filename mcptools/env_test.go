package mcptools_test

import (
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/mcptools"
)

// A stdio MCP server gets a minimal environment plus what its entry names: the user's API keys never reach a
// server that did not ask for them by name.
func TestStdioServersGetAMinimalEnvironment(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-never-leaves-0123456789")
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-never-leaves")
	t.Setenv("NAMED_TOKEN", "tok-named-on-purpose")
	t.Setenv("LC_TIME", "C")
	cfg := helperServer(t, "serve")
	f, err := mcptools.Parse([]byte(`{"mcpServers":{"helper":{"command":"`+cfg.Command+`","args":["-test.run=^$"],
		"env":{"MCPTOOLS_TEST_HELPER":"serve","GRANTED":"${NAMED_TOKEN}"}}}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	m := mcptools.Start(t.Context(), f, mcptools.Options{})
	t.Cleanup(func() { m.Close() })
	if fails := m.Failures(); len(fails) > 0 {
		t.Fatalf("server failed: %v", fails[0].Err)
	}
	res, err := toolByName(t, m.Tools(), "mcp__helper__env").Run(t.Context(), nil)
	if err != nil || res.IsError {
		t.Fatalf("env = %+v, %v", res, err)
	}
	env := "\n" + res.Content + "\n"
	for _, leak := range []string{"sk-never-leaves", "sk-ant-never-leaves", "NAMED_TOKEN="} {
		if strings.Contains(env, leak) {
			t.Errorf("the server's environment holds %q", leak)
		}
	}
	for _, want := range []string{"\nPATH=", "\nHOME=", "\nLC_TIME=C\n", "\nGRANTED=tok-named-on-purpose\n"} {
		if !strings.Contains(env, want) {
			t.Errorf("the server's environment lacks %q:\n%s", want, env)
		}
	}
}

func TestMinimalEnviron(t *testing.T) {
	got := mcptools.MinimalEnviron([]string{"PATH=/bin", "OPENAI_API_KEY=sk", "HOME=/h", "LC_ALL=C", "AWS_SECRET_ACCESS_KEY=x", "noequals", "TMPDIR=/t"})
	want := []string{"PATH=/bin", "HOME=/h", "LC_ALL=C", "TMPDIR=/t"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("MinimalEnviron = %q, want %q", got, want)
	}
}
