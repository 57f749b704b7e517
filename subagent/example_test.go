package subagent_test

import (
	"fmt"

	"github.com/deepresearch/deepresearch/subagent"
)

func ExampleParseMarkdown() {
	typ, err := subagent.ParseMarkdown([]byte(`---
name: web-researcher
description: Researches one sub-question on the web and reports cited findings
tools: mcp__brave__*, read_file, write_file
model: fast
---
Search, read the best sources, and report findings with their URLs.
`))
	if err != nil {
		panic(err)
	}
	fmt.Println(typ.Name, typ.Model, typ.Tools)
	fmt.Println(typ.Prompt)
	// Output:
	// web-researcher fast [mcp__brave__* read_file write_file]
	// Search, read the best sources, and report findings with their URLs.
}
