package research

import (
	"context"
	"strings"

	"github.com/deepresearch/deepresearch/sources"
)

// works collects the bibliographic records that search providers gave for the sources picked in any round, by
// document (see documentKey), from the collector's stored picks. A record the run cannot read back is simply absent: the
// report lists the source without it.
func (r *runner) works(ctx context.Context) map[string]*sources.Work {
	out := map[string]*sources.Work{}
	names, err := r.db.StepNames(ctx, "pick:")
	if err != nil {
		return out
	}
	for _, name := range names {
		if !strings.HasPrefix(name, "pick:") {
			continue
		}
		var picked []Candidate
		if ok, err := r.db.Step(ctx, name, &picked); err != nil || !ok {
			continue
		}
		for _, c := range picked {
			if c.Work != nil {
				out[documentKey(c.URL)] = c.Work
			}
		}
	}
	return out
}
