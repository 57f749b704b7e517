package mcptools_test

import (
	"fmt"

	"github.com/deepresearch/deepresearch/mcptools"
)

func ExampleParse() {
	f, err := mcptools.Parse([]byte(`{"mcpServers": {
		"github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/", "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}"}},
		"fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "${DOCS:-./docs}"], "subagentOnly": true}
	}}`), func(k string) string { return map[string]string{"GITHUB_TOKEN": "ghp_example"}[k] })
	if err != nil {
		panic(err)
	}
	gh, fs := f.Servers["github"], f.Servers["fs"]
	fmt.Println(gh.Kind(), gh.Headers["Authorization"])
	fmt.Println(fs.Kind(), fs.Args[2], fs.SubagentOnly)
	fmt.Println(mcptools.ToolName("github", "create_issue"))
	// Output:
	// http Bearer ghp_example
	// stdio ./docs true
	// mcp__github__create_issue
}
