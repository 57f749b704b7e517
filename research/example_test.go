package research_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/deepresearch/deepresearch/research"
	"github.com/deepresearch/deepresearch/research/extractive"
	"github.com/deepresearch/deepresearch/sources"
	"github.com/deepresearch/deepresearch/sources/corpus"
)

// Run researches a question over a folder of documents with the extractive engine: no model, no API key, no
// network. The report cites verbatim quotes; each citation resolves to a source.
func ExampleRun() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "research-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	docs, err := writeDocs(dir, beePages) // two Markdown pages about the waggle dance, in dir/docs
	if err != nil {
		log.Fatal(err)
	}
	ix, err := corpus.OpenWith(filepath.Join(dir, "index"), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ix.Close()
	if _, err := ix.Add(ctx, docs); err != nil {
		log.Fatal(err)
	}

	rep, err := research.Run(ctx, research.Config{
		Question: "How does the waggle dance tell honeybees where the flowers are?",
		Roles:    extractive.New(extractive.Config{Searchers: []sources.Searcher{ix}}),
		Fetcher:  sources.Router{Corpus: ix}, // file:// URLs of corpus results are read from the index
		OutDir:   filepath.Join(dir, "run"),
	})
	if err != nil {
		log.Fatal(err)
	}
	var cited []string
	for _, s := range rep.Sources {
		if len(s.Citations) > 0 {
			cited = append(cited, filepath.Base(strings.SplitN(s.URL, "#", 2)[0]))
		}
	}
	slices.Sort(cited)
	cited = slices.Compact(cited)
	fmt.Println("engine:", rep.Engine)
	fmt.Println("cited:", strings.Join(cited, ", "))
	fmt.Println("citations resolve:", len(rep.Citations) > 0 && len(rep.Evidence) > 0)
	// Output:
	// engine: extractive
	// cited: dance.md
	// citations resolve: true
}

// beePages are the example's documents by name: two Markdown pages about the waggle dance.
var beePages = map[string]string{
	"dance.md": "# The waggle dance\n\nA forager honeybee performs the waggle dance to tell its nestmates the direction and " +
		"distance of a food source.\n\nThe angle of the waggle run relative to vertical encodes the direction of the " +
		"food relative to the sun.\n",
	"distance.md": "# Distance\n\nThe duration of the waggle run encodes the distance to the flowers: a longer run " +
		"means a more distant food source.\n\nBees that follow the dance fly out and search near the indicated spot.\n",
}

// writeDocs writes pages (name → text) into the folder docs under dir, which it creates, and returns the folder.
func writeDocs(dir string, pages map[string]string) (string, error) {
	docs := filepath.Join(dir, "docs")
	if err := os.MkdirAll(docs, 0o755); err != nil {
		return "", err
	}
	for name, text := range pages {
		if err := os.WriteFile(filepath.Join(docs, name), []byte(text), 0o644); err != nil {
			return "", err
		}
	}
	return docs, nil
}

// FanOut runs a bounded parallel fan-out in which one failure never cancels the others; Loop repeats a step
// (rounds count from 0) until it reports done or the rounds run out; a Fleet bounds the agent calls in flight and
// in total across both, counting the calls that failed.
func ExampleFanOut() {
	ctx := context.Background()
	fleet := research.NewFleet(4, 100) // 4 calls at once, 100 in a run
	queries := []string{"waggle dance", "round dance", "", "pheromones"}
	var pool []string
	done, rounds, err := research.Loop(ctx, 3, func(ctx context.Context, round int) (bool, error) {
		found, errs := research.FanOut(ctx, queries, 2, func(ctx context.Context, q string) (string, error) {
			var hit string
			err := fleet.Do(ctx, func(context.Context) error {
				if q == "" {
					return errors.New("empty query")
				}
				hit = fmt.Sprintf("round %d: %s", round, q)
				return nil
			})
			return hit, err
		})
		for i := range found {
			if errs[i] == nil { // failed branches are dropped, the others kept
				pool = append(pool, found[i])
			}
		}
		queries = []string{"dance duration"} // the next round searches only what is missing
		return len(pool) >= 4, nil
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(done, rounds, fleet.Calls())
	for _, p := range pool {
		fmt.Println(p)
	}
	// Output:
	// true 2 5
	// round 0: waggle dance
	// round 0: round dance
	// round 0: pheromones
	// round 1: dance duration
}
