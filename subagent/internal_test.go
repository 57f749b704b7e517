package subagent

import (
	"errors"
	"strings"
	"testing"

	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/scripted"
)

// Even a task tool handed to an agent deeper than the limit refuses, without calling the model.
func TestDepthLimitIsEnforcedByTheTool(t *testing.T) {
	model := scripted.New(llm.Info{}, scripted.Sequence())
	f, err := New(Config{Model: model, MaxDepth: 2})
	if err != nil {
		t.Fatal(err)
	}
	res, err := f.toolAt(3).Run(t.Context(), []byte(`{"description":"deeper","subagent_type":"general-purpose"}`))
	if err != nil || !res.IsError || !strings.Contains(res.Content, "subagents may nest 2 levels and this one would be level 3") {
		t.Fatalf("result = %+v, %v", res, err)
	}
	if _, _, err := f.run(t.Context(), 3, GeneralPurpose, "x"); !errors.Is(err, ErrDepth) {
		t.Fatalf("err = %v", err)
	}
	if model.Calls() != 0 || f.Stats().Started != 0 {
		t.Fatal("a refused task must not start anything")
	}
}
