package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/flow/agent/react"
	"github.com/cloudwego/eino/schema"
)

// einoModel is the same instant fake model as runtimebench.Model, speaking eino's types: for the first N calls
// it asks for the echo tool with the step number, then it answers.
type einoModel struct {
	n     int
	calls *int
}

func (m einoModel) Generate(context.Context, []*schema.Message, ...model.Option) (*schema.Message, error) {
	*m.calls++
	if *m.calls > m.n {
		return &schema.Message{Role: schema.Assistant, Content: "done"}, nil
	}
	s := strconv.Itoa(*m.calls)
	return &schema.Message{Role: schema.Assistant, ToolCalls: []schema.ToolCall{{ID: "call_" + s, Type: "function",
		Function: schema.FunctionCall{Name: "echo", Arguments: `{"text":"step ` + s + `"}`}}}}, nil
}

func (m einoModel) Stream(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	msg, err := m.Generate(ctx, in, opts...)
	if err != nil {
		return nil, err
	}
	return schema.StreamReaderFromArray([]*schema.Message{msg}), nil
}

func (m einoModel) WithTools([]*schema.ToolInfo) (model.ToolCallingChatModel, error) { return m, nil }

type echoInput struct {
	Text string `json:"text" jsonschema:"description=what to echo"`
}

// einoLoop is one eino ReAct agent of N steps with the echo tool built the idiomatic way (utils.InferTool).
type einoLoop struct {
	agent *react.Agent
	calls *int
}

func newEinoLoop(ctx context.Context, n int) (*einoLoop, error) {
	echo, err := utils.InferTool("echo", "Echo the text back.", func(_ context.Context, in echoInput) (string, error) {
		return in.Text, nil
	})
	if err != nil {
		return nil, err
	}
	calls := new(int)
	a, err := react.NewAgent(ctx, &react.AgentConfig{
		ToolCallingModel: einoModel{n: n, calls: calls},
		ToolsConfig:      compose.ToolsNodeConfig{Tools: []tool.BaseTool{echo}},
		MaxStep:          2*n + 2, // a model step and a tools step per round
	})
	if err != nil {
		return nil, err
	}
	return &einoLoop{agent: a, calls: calls}, nil
}

func (l *einoLoop) Run(ctx context.Context) error {
	*l.calls = 0
	out, err := l.agent.Generate(ctx, []*schema.Message{
		schema.SystemMessage("You are a benchmark."),
		schema.UserMessage("echo the steps"),
	})
	if err != nil {
		return err
	}
	if out.Content != "done" {
		return fmt.Errorf("eino: answer %q", out.Content)
	}
	return nil
}
