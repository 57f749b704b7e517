package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/deepresearch/deepresearch/internal/request"
)

// errDurableAsks refuses a durable run that would ask the person: its plan is made by a Temporal worker, where
// no one can be asked, so a plan review or clarifying questions would wait on nothing.
var errDurableAsks = errors.New("a durable run's plan is made on a Temporal worker, where no one can be asked")

// durableSteer sets what a run submitted to Temporal takes of run's steering flags: a plan file travels in the
// request (the workers research it instead of asking the planner); --review and --clarify are refused before
// anything is submitted; the configuration's research.clarify is noted once and left out.
func (a *App) durableSteer(cmd *cobra.Command, fl steerFlags, req *request.Research) error {
	if fl.planFile != "" {
		p, err := loadPlanFile(fl.planFile)
		if err != nil {
			return usageError(err)
		}
		req.Plan = p
	}
	switch {
	case fl.review:
		return usageError(fmt.Errorf("--review with --temporal: %w; review the plan first with a local run, or write it to a file and give --plan FILE (a run folder's plan.yaml is one)", errDurableAsks))
	case fl.clarify && cmd.Flags().Changed("clarify"):
		return usageError(fmt.Errorf("--clarify with --temporal: %w; put what you mean in the question or in --instructions, or run without --temporal", errDurableAsks))
	case a.Config != nil && a.Config.Research.Clarify && !cmd.Flags().Changed("clarify"):
		fmt.Fprintln(a.Stderr, "note: a durable run asks no clarifying questions (research.clarify is set); planning without them")
	}
	return nil
}
