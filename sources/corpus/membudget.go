package corpus

import (
	"context"
	"errors"

	"golang.org/x/sync/semaphore"

	"github.com/deepresearch/deepresearch/sources/extract"
)

// DefaultMemoryBudget is the memory the files being indexed at once may
// take while they are decoded, when Options.MemoryBudget is zero.
const DefaultMemoryBudget = 1 << 30

// Estimates of the memory decoding a file takes. A zip container is given a
// share from its size on disk; it may read that share's worth of
// uncompressed members (containerShare), and one that expands past it (a
// few kilobytes naming one chapter a hundred times) is read again with the
// largest share, which the per-file bounds allow: extract.MaxContainerSize of
// members, held with what is parsed from them.
const (
	minShare       = 64 << 10
	containerRatio = 3 // bytes of memory per uncompressed byte read from a container
	maxShare       = extract.MaxContainerSize*containerRatio + extract.MaxTextSize*4
)

// memBudget is the budget shared by the index workers: a weighted
// semaphore that each file acquires by its expected decoded size before it
// is read, so that peak memory stays bounded whatever the number of
// workers. A share larger than the budget is cut to the budget: such a file
// is read alone.
type memBudget struct {
	sem   *semaphore.Weighted
	total int64
	// minContainer is the least a zip container is expected to expand to (zero: 4 MiB); a test with a small
	// budget sets a smaller one, so that several small containers are read at once.
	minContainer int64
	text         int64 // extract.Limits.Text
}

func newMemBudget(total int64) *memBudget {
	if total <= 0 {
		total = DefaultMemoryBudget
	}
	return &memBudget{sem: semaphore.NewWeighted(total), total: total}
}

// share is the part of the budget the job's file is expected to need:
// its size on disk times a factor by format, at least minShare and at most
// maxShare; and for a zip container, the uncompressed bytes it may read
// with that share.
func (m *memBudget) share(j job) (share, container int64) {
	if j.f.Zip {
		// Members compress about fourfold; each uncompressed byte is held
		// as bytes, a parse tree and text.
		floor := m.minContainer
		if floor <= 0 {
			floor = 4 << 20
		}
		container = max(j.size*4, floor)
		return m.clamp(j.size + container*containerRatio), container
	}
	// Text and source code take the bytes, the text, chunks and their terms: 4 by default.
	factor := int64(4)
	if j.f.Expansion > 0 {
		factor = int64(j.f.Expansion)
	}
	return m.clamp(max(j.size*factor, minShare)), extract.MaxContainerSize
}

func (m *memBudget) clamp(n int64) int64 { return min(max(n, minShare), maxShare, m.total) }

// process processes the job within its share of the budget. ok is false
// when ctx ended before the share was granted.
func (m *memBudget) process(ctx context.Context, j job) (outcome, bool) {
	share, container := m.share(j)
	if err := m.sem.Acquire(ctx, share); err != nil {
		return outcome{}, false
	}
	o := process(ctx, j, extract.Limits{Container: container, Text: m.text})
	if errors.Is(o.err, extract.ErrContainerShare) {
		// It expands past its share: again with the largest one.
		m.sem.Release(share)
		share = m.clamp(maxShare)
		if err := m.sem.Acquire(ctx, share); err != nil {
			return outcome{}, false
		}
		o = process(ctx, j, extract.Limits{Container: extract.MaxContainerSize, Text: m.text})
	}
	o.share = share
	return o, true
}

// release returns a written outcome's share.
func (m *memBudget) release(share int64) {
	if share > 0 {
		m.sem.Release(share)
	}
}
