package corpus

import (
	"slices"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	"github.com/blevesearch/bleve/v2/analysis/lang/cjk"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	"github.com/blevesearch/bleve/v2/analysis/token/porter"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
	"github.com/blevesearch/bleve/v2/mapping"
	index "github.com/blevesearch/bleve_index_api"
)

// analyzerName is the analyzer for all text fields. It handles English and
// CJK in one pass:
//
//   - unicode tokenizer: words for alphabetic scripts, single ideographs
//     for Han/Kana;
//   - cjk_width: folds full-width Latin and half-width Katakana;
//   - possessive_en, to_lower;
//   - cjk_bigram: overlapping ideograph bigrams (内存模型 → 内存 存模 模型),
//     the standard way to index Chinese/Japanese without a dictionary;
//     Latin tokens pass through untouched;
//   - name parts: a qualified name, one word to the tokenizer, is indexed
//     with its parts (fs.readfile → fs readfile fs.readfile; see
//     nameparts.go); queries are analysed without them (queryAnalyzerName);
//   - stemmer_porter: "happens" and "happen" meet; CJK bigrams have no Latin
//     suffixes so they pass through unchanged.
//
// There is deliberately no stop-word filter: the English list drops words
// such as "before" and "after", which would turn the query "happens before"
// into just "happen"; BM25's IDF already discounts common words.
const analyzerName = "deepresearch_text"

// queryAnalyzerName analyses queries: the text analyser without the name parts, which the index holds already —
// a query for "dgram" meets the part of the indexed `node:dgram`, and a query naming "Node.js" weighs the name
// once rather than with "node" and "js" as well. An index built before the name parts (analysisVersion 0) has
// no such analyser and analyses queries with analyzerName (generation.queryAnalyzer).
const queryAnalyzerName = "deepresearch_query"

const (
	chunkType = "chunk"
	fileType  = "file"
)

func newMapping() (mapping.IndexMapping, error) {
	im := bleve.NewIndexMapping()
	im.ScoringModel = index.BM25Scoring
	filters := []string{cjk.WidthName, en.PossessiveName, lowercase.Name, cjk.BigramName, namePartsName, porter.Name}
	queryFilters := slices.DeleteFunc(slices.Clone(filters), func(f string) bool { return f == namePartsName })
	for name, filters := range map[string][]string{analyzerName: filters, queryAnalyzerName: queryFilters} {
		if err := im.AddCustomAnalyzer(name, map[string]any{
			"type":          custom.Name,
			"tokenizer":     unicode.Name,
			"token_filters": filters,
		}); err != nil {
			return nil, err
		}
	}
	im.DefaultAnalyzer = analyzerName
	im.StoreDynamic = false
	im.IndexDynamic = false
	im.DocValuesDynamic = false

	// Chunks are searched and store nothing: their text is a line range of
	// their file's text, which the file document stores once.
	text := bleve.NewTextFieldMapping()
	text.Analyzer = analyzerName
	text.Store = false
	text.IncludeTermVectors = true // phrase queries need positions
	text.IncludeInAll = false
	text.DocValues = false

	title := bleve.NewTextFieldMapping()
	title.Analyzer = analyzerName
	title.Store = false
	title.IncludeTermVectors = true
	title.IncludeInAll = false
	title.DocValues = false

	dm := bleve.NewDocumentStaticMapping()
	dm.AddFieldMappingsAt("text", text)
	dm.AddFieldMappingsAt("title", title)
	im.AddDocumentMapping(chunkType, dm)

	im.DefaultMapping = dm
	im.TypeField = "_type"
	return im, nil
}

// newTextsMapping is the mapping of the texts index: file documents that
// store their text and metadata and index nothing. They live apart from
// the chunks so that they do not count in the chunks' BM25 statistics
// (document count and average field length).
func newTextsMapping() mapping.IndexMapping {
	stored := func() *mapping.FieldMapping {
		f := bleve.NewTextFieldMapping()
		f.Analyzer = keyword.Name
		f.Index = false
		f.Store = true
		f.IncludeTermVectors = false
		f.IncludeInAll = false
		f.DocValues = false
		return f
	}
	im := bleve.NewIndexMapping()
	im.DefaultAnalyzer = keyword.Name
	im.StoreDynamic = false
	im.IndexDynamic = false
	im.DocValuesDynamic = false
	fm := bleve.NewDocumentStaticMapping()
	fm.AddFieldMappingsAt("body", stored())
	fm.AddFieldMappingsAt("meta", stored())
	im.AddDocumentMapping(fileType, fm)
	im.DefaultMapping = fm
	im.TypeField = "_type"
	return im
}

// queryAnalyzer is the name of the analyser of queries of the generation's index (see queryAnalyzerName).
func (g *generation) queryAnalyzer() string {
	if g.idx.Mapping().AnalyzerNamed(queryAnalyzerName) != nil {
		return queryAnalyzerName
	}
	return analyzerName
}
