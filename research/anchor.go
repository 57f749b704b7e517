package research

import (
	"github.com/deepresearch/deepresearch/research/publish"
	"github.com/deepresearch/deepresearch/research/state"
	"github.com/deepresearch/deepresearch/sources"
)

// Evidence from a long document is cited by the lines its quote occupies (file:///x#L120-L122), while the text
// that was read may have been fetched under another anchor into the same file (the search hit's chunk,
// file:///x#L100-L180). The plain-text part of tying such an anchor to the stored text it quotes is
// research/publish's (publish.LineAnchor, publish.QuoteInLines); choosing the stored document is the graph's.

// documentKey is a URL's document identity: its normalised form without the fragment.
func documentKey(raw string) string { return publish.StripFragment(sources.NormalizeURL(raw)) }

// pickDocument chooses the stored document a source URL refers to: the one fetched under that URL; else one
// fetched under another anchor into the same file — preferring the narrowest whose lines contain the cited lines,
// then a fetch of the whole file, then the first fetched. Nil when the run read nothing of that file.
func pickDocument(docs []state.Document, source string) *state.Document {
	want := sources.NormalizeURL(source)
	key := publish.StripFragment(want)
	first, last, anchored := publish.LineAnchor(source)
	var whole, containing, any *state.Document
	width := 0
	for i := range docs {
		d := &docs[i]
		n := sources.NormalizeURL(d.URL)
		if n == want {
			return d
		}
		if publish.StripFragment(n) != key {
			continue
		}
		if any == nil {
			any = d
		}
		a, b, ok := publish.LineAnchor(d.URL)
		switch {
		case !ok:
			if whole == nil {
				whole = d
			}
		case anchored && a <= first && last <= b && (containing == nil || b-a < width):
			containing, width = d, b-a
		}
	}
	switch {
	case containing != nil:
		return containing
	case whole != nil:
		return whole
	}
	return any
}
