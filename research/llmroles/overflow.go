package llmroles

import (
	"context"
	"errors"
	"fmt"

	"github.com/deepresearch/deepresearch/llm"
	"github.com/deepresearch/deepresearch/llm/tokens"
	"github.com/deepresearch/deepresearch/research"
)

// maxShrink bounds how often a request refused for its length is made smaller and sent again.
const maxShrink = 5

// shrinkFloor is the least material (tokens of document text or evidence) a refused request is shrunk to; a
// model whose window cannot hold that much cannot do the task.
const shrinkFloor = 256

// shrinkTarget says how many tokens of material the next request may carry after a request carrying material
// tokens of it was refused as too long (err, a *llm.ContextLengthError). The size is measured, never nominal:
// when the server stated its window (Limit), the target is what fits in it — the request's own overhead (the
// refused request's locally counted size, Sent, less its material) and room for the answer (reserve tokens)
// taken off, in the server's tokens converted by how the server and the local count disagreed on this very
// request; otherwise, or when that would not be smaller, half the material. The target is always below
// material; ok is false when it would be below shrinkFloor.
func shrinkTarget(err error, material, reserve int) (target int, ok bool) {
	target = material / 2
	var cle *llm.ContextLengthError
	if errors.As(err, &cle) && cle.Limit > 0 && cle.Sent > 0 {
		ratio := 1.0 // server tokens per local token
		if cle.Requested > 0 {
			ratio = float64(cle.Requested) / float64(cle.Sent)
		}
		if reserve <= 0 {
			reserve = 1024
		}
		reserve = min(reserve, cle.Limit/4)
		overhead := max(cle.Sent-material, 0)
		// Nine tenths of what fits: tokenizers disagree by more than their ratio on one request suggests.
		fit := int(0.9*float64(cle.Limit-reserve)/ratio) - overhead
		if fit < material {
			target = fit
		}
	}
	if target < shrinkFloor || target >= material {
		return 0, false
	}
	return target, true
}

// sentTokens is the refused request's size as measured: the provider's or the role runner's local count.
func sentTokens(err error) int {
	var cle *llm.ContextLengthError
	if errors.As(err, &cle) {
		return cle.Sent
	}
	return 0
}

// withPool calls ask with the evidence pool rendered in at most budget tokens (renderPool: its text, the items
// shown, how many were left out). While the request is refused as too long for the model (at most maxShrink
// times), the pool is shown smaller, by the refused request's measured size (shrinkTarget), never the same
// request again; when nothing smaller can be shown (the most relevant item alone is that long) the refusal
// stands. role names the role asking, in the log and the error.
func (s *set) withPool(ctx context.Context, role string, plan *research.Plan, pool []research.Evidence, budget int,
	counter tokens.Counter, ask func(poolText string, shown []research.Evidence, omitted int) error) error {
	var lastErr error
	prev := 0 // the pool tokens of the request refused as too long
	for shrink := 0; ; shrink++ {
		poolText, shown, omitted := renderPool(plan, pool, budget, counter)
		material := counter.Count(poolText)
		if prev > 0 && material >= prev {
			return fmt.Errorf("llmroles: %s: the evidence pool cannot be shown in less than %d tokens: %w", role, material, lastErr)
		}
		err := ask(poolText, shown, omitted)
		if err != nil && llm.IsContextLength(err) && shrink < maxShrink && ctx.Err() == nil {
			if target, ok := shrinkTarget(err, material, s.lim.MaxOutputTokens); ok {
				s.logger.Warn("evidence pool too long for the "+role+"; shrinking", "role", role,
					"pool_tokens", material, "sent_tokens", sentTokens(err), "target_tokens", target)
				budget, prev, lastErr = target, material, err
				continue
			}
		}
		return err
	}
}
