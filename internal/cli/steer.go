package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/deepresearch/deepresearch/internal/request"
	"github.com/deepresearch/deepresearch/research"
)

// steerFlags are run's options for steering a run: how deep, how long, for whom.
type steerFlags struct {
	depth        string
	length       string
	instructions string
	review       bool
	planFile     string
	clarify      bool
}

func addSteerFlags(cmd *cobra.Command, fl *steerFlags) {
	f := cmd.Flags()
	f.StringVar(&fl.depth, "depth", "", "how much research: "+strings.Join(research.DepthNames(), ", ")+
		" (auto, the default with a model: the planner triages the question; see docs/steering.md)")
	f.StringVar(&fl.length, "length", "", "report length: brief, standard, long or a number of words (default: as the evidence makes it)")
	f.StringVar(&fl.instructions, "instructions", "", `audience, focus, what to leave out ("for a newcomer; skip history"), read by the planner and the synthesizer`)
	f.BoolVar(&fl.review, "review", false, "show the plan before anything is searched: accept it, edit it in $EDITOR as YAML, drop or add sub-questions (needs a terminal)")
	f.StringVar(&fl.planFile, "plan", "", "research this plan instead of asking the planner: a YAML file with sub_questions: (a run folder's plan.yaml is one)")
	f.BoolVar(&fl.clarify, "clarify", false, "let the planner ask up to three clarifying questions of an ambiguous question first, on the terminal (default: research.clarify)")
}

// steer sets what a run on the terminal asks of the person: the plan review and the clarifying questions. It
// reads the plan file into req.
// It returns the terminal to ask on (nil when nothing is asked) and whether to ask clarifying questions.
func (a *App) steer(cmd *cobra.Command, fl steerFlags, req *request.Research) (*terminalIO, bool, error) {
	if fl.planFile != "" {
		p, err := loadPlanFile(fl.planFile)
		if err != nil {
			return nil, false, usageError(err)
		}
		req.Plan = p
	}
	clarify := fl.clarify
	if !cmd.Flags().Changed("clarify") && a.Config != nil {
		clarify = a.Config.Research.Clarify
	}
	if !fl.review && !clarify {
		return nil, false, nil
	}
	t, err := newTerminalIO(a.Stdin, a.Stderr, a.getenv, "--review")
	if err != nil {
		if fl.review {
			return nil, false, usageError(fmt.Errorf("%w; give the plan with --plan FILE instead", err))
		}
		if cmd.Flags().Changed("clarify") {
			fmt.Fprintln(a.Stderr, "note: no terminal to ask clarifying questions on; planning without them")
		}
		return nil, false, nil
	}
	return t, clarify, nil
}

// check refuses a value no run takes, naming the flag.
func (fl steerFlags) check() error {
	if err := research.CheckDepth(fl.depth); err != nil {
		return usageError(fmt.Errorf("--depth: %w", err))
	}
	if err := research.CheckLength(fl.length); err != nil {
		return usageError(fmt.Errorf("--length: %w", err))
	}
	if err := research.CheckInstructions(fl.instructions); err != nil {
		return usageError(fmt.Errorf("--instructions: %w", err))
	}
	return nil
}
