package research

import (
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/deepresearch/deepresearch/research/publish"
)

func TestTextFragmentURL(t *testing.T) {
	for _, tc := range []struct {
		name, source, quote, want string
		ok                        bool
	}{
		{"short quote whole", "https://example.com/lsm", "Deletes are tombstones.",
			"https://example.com/lsm#:~:text=Deletes%20are%20tombstones.", true},
		{"the old anchor goes", "https://example.com/lsm#L3-L4", "Deletes are tombstones.",
			"https://example.com/lsm#:~:text=Deletes%20are%20tombstones.", true},
		{"long quote start,end", "https://example.com/a",
			"A delete writes a tombstone, which hides older values until compaction removes both of them for good.",
			"https://example.com/a#:~:text=A%20delete%20writes%20a,of%20them%20for%20good.", true},
		{"syntax characters encoded", "https://example.com/a", "x-y, a&b #1 %",
			"https://example.com/a#:~:text=x%2Dy%2C%20a%26b%20%231%20%25", true},
		{"markdown marks dropped", "http://example.com/p", "See **the** [`memtable`](https://x/y) docs",
			"http://example.com/p#:~:text=See%20the%20memtable%20docs", true},
		{"heading and list marks dropped", "http://example.com/p", "## Tombstones", "http://example.com/p#:~:text=Tombstones", true},
		{"elided quote spans its fragments", "https://example.com/a", "Writes go to the memtable" + publish.FragmentSeparator + "flushed as an SSTable",
			"https://example.com/a#:~:text=Writes%20go%20to%20the,flushed%20as%20an%20SSTable", true},
		{"table cells are separate runs", "https://example.com/t", "name\tvalue\ttombstone\tmarker",
			"https://example.com/t#:~:text=name,marker", true},
		{"Chinese clauses", "https://zh.example/lsm", "删除操作不会立即移除数据，而是写入一个墓碑标记，在之后的合并过程中才真正清除旧的数据。",
			"https://zh.example/lsm#:~:text=" + fragmentEscape("删除操作不会立即移除数据，") + "," + fragmentEscape("在之后的合并过程中才真正清除旧的数据"), true},
		{"local HTML file", "file:///docs/page.html#L135-L135", "the quote", "file:///docs/page.html#:~:text=the%20quote", true},
		{"local Markdown keeps lines", "file:///docs/page.md#L3-L4", "the quote", "", false},
		{"local code keeps lines", "file:///src/main.go#L3", "func main", "", false},
		{"web PDF", "https://example.com/paper.PDF", "the quote", "", false},
		{"arXiv PDF", "https://arxiv.org/pdf/2401.00001", "the quote", "", false},
		{"other scheme", "javascript:alert(1)", "the quote", "", false},
		{"nothing to match", "https://example.com/a", "** [] |", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := TextFragmentURL(tc.source, tc.quote)
			if ok != tc.ok || got != tc.want {
				t.Fatalf("TextFragmentURL(%q, %q) = %q, %v; want %q, %v", tc.source, tc.quote, got, ok, tc.want, tc.ok)
			}
		})
	}
}

// FuzzTextFragmentURL: whatever the quote (it comes from a fetched page), the link is the source's own URL plus one
// text directive whose values carry none of the directive's syntax and decode to words of the quote.
func FuzzTextFragmentURL(f *testing.F) {
	for _, s := range []string{"Deletes are tombstones.", "a-b,c&d", "删除操作，写入墓碑。", "x … y", "**[a](b)**\tc\n#d", "\\*\\_", "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, quote string) {
		got, ok := TextFragmentURL("https://example.com/page#old", quote)
		if !ok {
			return
		}
		const prefix = "https://example.com/page#:~:text="
		if !strings.HasPrefix(got, prefix) {
			t.Fatalf("link %q does not start with %q", got, prefix)
		}
		vals := strings.Split(got[len(prefix):], ",")
		if len(vals) > 2 {
			t.Fatalf("link %q has %d values", got, len(vals))
		}
		for _, v := range vals {
			if strings.ContainsAny(v, "-&#, ") {
				t.Fatalf("value %q of %q holds directive syntax", v, got)
			}
			d, err := url.PathUnescape(v)
			if err != nil || d == "" || !utf8.ValidString(d) {
				t.Fatalf("value %q of %q: %q, %v", v, got, d, err)
			}
			for _, w := range strings.Fields(d) {
				if !strings.Contains(quote, strings.TrimRight(w, "。！？；，、：")) && !strings.Contains(stripMarks(quote), w) {
					t.Fatalf("word %q of %q is not in the quote %q", w, got, quote)
				}
			}
		}
	})
}

// stripMarks drops the Markdown a rendered page does not show, as fragmentEnds does.
func stripMarks(s string) string {
	s = mdLinkRE.ReplaceAllString(s, "$1")
	return strings.NewReplacer(`\`, "", "`", "", "**", "", "__", "").Replace(s)
}
