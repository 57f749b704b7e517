package corpus

import (
	"bytes"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/registry"
)

// namePartsName is the token filter that adds the parts of a qualified name. The Unicode word rules the tokenizer
// follows (UAX #29) join letters across "." and ":", so `fs.readFile`, `node:dgram` and `inspect.get_annotations`
// are each one word: a search for "readFile", "dgram" or "get_annotations" would never reach the page that
// documents them. The filter puts the parts in the name's place, one after the other, and keeps the whole name at
// the place of its last part, so a phrase matches the name written either way ("fs.readFile callback", "fs
// readFile callback"). Only the index is analysed so (queryAnalyzerName). A snake_case name is left whole: its
// parts are common words ("unique_constraint_schema" in every column of a catalog table) that would outweigh the
// prose using them, and a reader searches for such a name as it is written.
const namePartsName = "deepresearch_name_parts"

// The filter is a type of Bleve's registry, which resolves the names a stored index mapping lists; registering it
// is the only way a custom filter survives reopening an index.
func init() {
	if err := registry.RegisterTokenFilter(namePartsName, func(map[string]any, *registry.Cache) (analysis.TokenFilter, error) {
		return namePartsFilter{}, nil
	}); err != nil {
		panic(err)
	}
}

type namePartsFilter struct{}

// nameJoiners are the characters inside a word that join the parts of a qualified name.
const nameJoiners = ".:"

func (namePartsFilter) Filter(in analysis.TokenStream) analysis.TokenStream {
	var out analysis.TokenStream
	shift := 0
	for i, t := range in {
		t.Position += shift
		parts := nameParts(t)
		if len(parts) == 0 {
			if out != nil {
				out = append(out, t)
			}
			continue
		}
		if out == nil {
			out = make(analysis.TokenStream, 0, len(in)+len(parts))
			out = append(out, in[:i]...)
		}
		for j, p := range parts {
			out = append(out, &analysis.Token{
				Term: p.term, Start: t.Start + p.start, End: t.Start + p.start + len(p.term),
				Position: t.Position + j, Type: t.Type, KeyWord: t.KeyWord,
			})
		}
		shift += len(parts) - 1
		t.Position += len(parts) - 1
		out = append(out, t)
	}
	if out == nil {
		return in
	}
	return out
}

type namePart struct {
	term  []byte
	start int // byte offset in the name
}

// nameParts splits a word token at the characters that join a name's parts, leaving out the parts of one
// character (the "c" of "gcc_libinit.c" is no mention of the C language, nor are "e.g."'s letters words); it
// returns nothing for a word of one part, and for a number ("3.14").
func nameParts(t *analysis.Token) []namePart {
	if t.Type != analysis.AlphaNumeric || !bytes.ContainsAny(t.Term, nameJoiners) {
		return nil
	}
	var parts []namePart
	start, n := 0, 0
	for i := 0; i <= len(t.Term); i++ {
		if i < len(t.Term) && bytes.IndexByte([]byte(nameJoiners), t.Term[i]) < 0 {
			continue
		}
		if i > start {
			n++
			if utf8.RuneCount(t.Term[start:i]) > 1 {
				parts = append(parts, namePart{term: bytes.Clone(t.Term[start:i]), start: start})
			}
		}
		start = i + 1
	}
	if n < 2 {
		return nil
	}
	return parts
}
