package websearch

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/deepresearch/deepresearch/sources"
)

// The bodies below follow each service's documented answer shape (field names, nesting, types), trimmed to one or
// two records: an arXiv Atom feed with the arxiv: extension elements, OpenAlex's abstract_inverted_index, Crossref's
// message.items with date-parts and JATS abstracts, Semantic Scholar's data with mixed-type externalIds, Europe
// PMC's resultList, Wikipedia's REST search pages with searchmatch markup.

const arxivAtom = `<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/" xmlns:arxiv="http://arxiv.org/schemas/atom">
  <title type="html">ArXiv Query: search_query=all:raft AND all:consensus</title>
  <opensearch:totalResults>2</opensearch:totalResults>
  <entry>
    <id>http://arxiv.org/abs/2101.00001v2</id>
    <updated>2021-02-01T00:00:00Z</updated>
    <published>2021-01-01T10:00:00Z</published>
    <title>In Search of an Understandable
      Consensus Algorithm</title>
    <summary>  Raft is a consensus algorithm for managing a replicated log.
    </summary>
    <author><name>Diego Ongaro</name></author>
    <author><name>John Ousterhout</name></author>
    <arxiv:doi>10.5555/Raft.2014</arxiv:doi>
    <arxiv:journal_ref>USENIX ATC 2014</arxiv:journal_ref>
    <link href="http://arxiv.org/abs/2101.00001v2" rel="alternate" type="text/html"/>
    <link title="pdf" href="http://arxiv.org/pdf/2101.00001v2" rel="related" type="application/pdf"/>
  </entry>
  <entry>
    <id>http://arxiv.org/abs/2202.00002v1</id>
    <published>2022-02-02T00:00:00Z</published>
    <title>Paxos Made Simple, Again</title>
    <summary>Another look.</summary>
    <author><name>A. N. Author</name></author>
    <link href="http://arxiv.org/abs/2202.00002v1" rel="alternate" type="text/html"/>
  </entry>
</feed>`

const openAlexJSON = `{"meta":{"count":1,"page":1,"per_page":10},"results":[{
  "id":"https://openalex.org/W2741809807","doi":"https://doi.org/10.7717/PEERJ.4375",
  "display_name":"The state of OA","publication_year":2018,"publication_date":"2018-02-13",
  "ids":{"openalex":"https://openalex.org/W2741809807","doi":"https://doi.org/10.7717/peerj.4375","pmid":"https://pubmed.ncbi.nlm.nih.gov/29456894"},
  "authorships":[{"author_position":"first","author":{"id":"https://openalex.org/A1","display_name":"Heather Piwowar"}},
                 {"author_position":"last","author":{"id":"https://openalex.org/A2","display_name":"Jason Priem"}}],
  "primary_location":{"is_oa":true,"landing_page_url":"https://doi.org/10.7717/peerj.4375","pdf_url":null,
                      "source":{"id":"https://openalex.org/S1","display_name":"PeerJ"}},
  "best_oa_location":{"is_oa":true,"landing_page_url":"https://peerj.com/articles/4375","pdf_url":"https://peerj.com/articles/4375.pdf"},
  "abstract_inverted_index":{"Despite":[0],"growing":[1],"interest":[2],"in":[3,9],"Open":[4],"Access":[5],"(OA)":[6],"few":[7],"studies":[8],"scale.":[10]}
}]}`

const crossrefJSON = `{"status":"ok","message-type":"work-list","message-version":"1.0.0","message":{"total-results":1,"items":[{
  "DOI":"10.1145/3132747.3132765","title":["Paxos Made Live"],"URL":"http://dx.doi.org/10.1145/3132747.3132765",
  "author":[{"given":"Tushar","family":"Chandra","sequence":"first"},{"name":"The Chubby Team","sequence":"additional"}],
  "issued":{"date-parts":[[2007,8,12]]},"container-title":["Proceedings of PODC"],
  "abstract":"<jats:p>We describe our experience building a fault-tolerant database.</jats:p>",
  "link":[{"URL":"https://dl.acm.org/doi/pdf/10.1145/3132747.3132765","content-type":"application/pdf"}]
}]}}`

const s2JSON = `{"total":2,"offset":0,"next":2,"data":[
 {"paperId":"649def34f8be52c8b66281af98ae884c09aef38b","title":"Construction of the Literature Graph","abstract":"We describe a deployed scalable system.",
  "year":2018,"publicationDate":"2018-06-01","venue":"NAACL","url":"https://www.semanticscholar.org/paper/649def34",
  "authors":[{"authorId":"1741101","name":"Waleed Ammar"}],
  "externalIds":{"DOI":"10.18653/V1/N18-3011","ArXiv":"1805.02262","PubMed":29321009,"CorpusId":19170988},
  "openAccessPdf":{"url":"https://aclanthology.org/N18-3011.pdf","status":"HYBRID"}},
 {"paperId":"x2","title":"No PDF here","abstract":null,"year":null,"url":"https://www.semanticscholar.org/paper/x2","authors":[],"externalIds":{},"openAccessPdf":null}
]}`

const europePMCJSON = `{"version":"6.9","hitCount":2,"resultList":{"result":[
 {"id":"34567890","source":"MED","pmid":"34567890","pmcid":"PMC8000001","doi":"10.1000/xyz123","title":"CRISPR screens in T cells.",
  "authorString":"Smith J, Doe A, Roe B.","pubYear":"2021","journalTitle":"Nature","abstractText":"We performed genome-wide screens.",
  "firstPublicationDate":"2021-09-24"},
 {"id":"11111111","source":"MED","pmid":"11111111","title":"An older abstract-only paper.","authorString":"Lee K.","pubYear":"1999",
  "journalInfo":{"journal":{"title":"Cell"}}}
]}}`

const wikiJSON = `{"pages":[
 {"id":38454,"key":"Raft_(algorithm)","title":"Raft (algorithm)","excerpt":"<span class=\"searchmatch\">Raft</span> is a consensus algorithm","description":"Consensus algorithm","thumbnail":null},
 {"id":2,"key":"Bad\u0007Key","title":"Hostile","excerpt":"x","description":null}
]}`

// scholarFake serves one canned body at one path and records the requests it was sent.
type scholarFake struct {
	path, contentType, body string
	status                  int

	mu   sync.Mutex
	reqs []*http.Request
}

func (f *scholarFake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.reqs = append(f.reqs, r.Clone(context.Background()))
	f.mu.Unlock()
	if r.URL.Path != f.path {
		http.Error(w, "no such endpoint "+r.URL.Path, http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", f.contentType)
	if f.status != 0 {
		w.WriteHeader(f.status)
	}
	fmt.Fprint(w, f.body)
}

func (f *scholarFake) last(t *testing.T) *http.Request {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.reqs) == 0 {
		t.Fatal("the service was not called")
	}
	return f.reqs[len(f.reqs)-1]
}

func scholarly(t *testing.T, name string, f *scholarFake, env map[string]string) sources.Searcher {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	s, err := New(name, Config{BaseURL: srv.URL, Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	// The services' paces are real (seconds apart); a test sends one request, so lift the pace for it.
	setPace(s, rate.Inf)
	return s
}

// setPace replaces a scholarly client's request pace.
func setPace(s sources.Searcher, l rate.Limit) {
	var c *client
	switch v := s.(type) {
	case *ArXiv:
		c = v.c
	case *OpenAlex:
		c = v.c
	case *Crossref:
		c = v.c
	case *SemanticScholar:
		c = v.c
	case *EuropePMC:
		c = v.c
	case *Wikipedia:
		c = v.c
	}
	c.pace = rate.NewLimiter(l, 1)
}

func TestScholarlyProvidersReadTheirWireFormats(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fake  *scholarFake
		query string
		want  []sources.Result
		check func(t *testing.T, r *http.Request)
	}{
		{name: "arxiv", query: "How does the Raft consensus algorithm elect a leader?",
			fake: &scholarFake{path: "/api/query", contentType: "application/atom+xml", body: arxivAtom},
			want: []sources.Result{
				{Title: "In Search of an Understandable Consensus Algorithm", URL: "http://arxiv.org/pdf/2101.00001v2",
					Snippet: "Raft is a consensus algorithm for managing a replicated log.",
					Work: &sources.Work{Authors: []string{"Diego Ongaro", "John Ousterhout"}, Year: 2021, Venue: "USENIX ATC 2014",
						DOI: "10.5555/raft.2014", ArXiv: "2101.00001v2"}},
				{Title: "Paxos Made Simple, Again", URL: "http://arxiv.org/abs/2202.00002v1", Snippet: "Another look.",
					Work: &sources.Work{Authors: []string{"A. N. Author"}, Year: 2022, ArXiv: "2202.00002v1"}},
			},
			check: func(t *testing.T, r *http.Request) {
				q := r.URL.Query()
				if got := q.Get("search_query"); got != "all:raft AND all:consensus AND all:algorithm AND all:elect AND all:leader" {
					t.Errorf("search_query %q", got)
				}
				if q.Get("sortBy") != "relevance" || q.Get("max_results") != "10" {
					t.Errorf("query %v", q)
				}
				if !strings.Contains(r.Header.Get("Accept"), "atom+xml") {
					t.Errorf("Accept %q", r.Header.Get("Accept"))
				}
			}},
		{name: "openalex", query: "open access prevalence",
			fake: &scholarFake{path: "/works", contentType: "application/json", body: openAlexJSON},
			want: []sources.Result{{Title: "The state of OA", URL: "https://peerj.com/articles/4375.pdf",
				Snippet: "Despite growing interest in Open Access (OA) few studies in scale.",
				Work: &sources.Work{Authors: []string{"Heather Piwowar", "Jason Priem"}, Year: 2018, Venue: "PeerJ",
					DOI: "10.7717/peerj.4375", PMID: "29456894"}}},
			check: func(t *testing.T, r *http.Request) {
				if got := r.URL.Query().Get("mailto"); got != "ops@example.org" {
					t.Errorf("mailto %q: want the contact address for the polite pool", got)
				}
				if got := r.URL.Query().Get("search"); got != "open access prevalence" {
					t.Errorf("search %q", got)
				}
			}},
		{name: "crossref", query: "Paxos made live",
			fake: &scholarFake{path: "/works", contentType: "application/json", body: crossrefJSON},
			want: []sources.Result{{Title: "Paxos Made Live", URL: "https://doi.org/10.1145/3132747.3132765",
				Snippet: "We describe our experience building a fault-tolerant database.",
				Work: &sources.Work{Authors: []string{"Tushar Chandra", "The Chubby Team"}, Year: 2007, Venue: "Proceedings of PODC",
					DOI: "10.1145/3132747.3132765"}}},
			check: func(t *testing.T, r *http.Request) {
				if ua := r.Header.Get("User-Agent"); !strings.Contains(ua, "mailto:ops@example.org") || !strings.HasPrefix(ua, "deepresearch") {
					t.Errorf("User-Agent %q: want the project and the contact address", ua)
				}
				if r.URL.Query().Get("rows") != "10" {
					t.Errorf("rows %q", r.URL.Query().Get("rows"))
				}
			}},
		{name: "semanticscholar", query: "literature graph construction",
			fake: &scholarFake{path: "/graph/v1/paper/search", contentType: "application/json", body: s2JSON},
			want: []sources.Result{
				{Title: "Construction of the Literature Graph", URL: "https://aclanthology.org/N18-3011.pdf",
					Snippet: "We describe a deployed scalable system.",
					Work: &sources.Work{Authors: []string{"Waleed Ammar"}, Year: 2018, Venue: "NAACL", DOI: "10.18653/v1/n18-3011",
						ArXiv: "1805.02262", PMID: "29321009"}},
				{Title: "No PDF here", URL: "https://www.semanticscholar.org/paper/x2"},
			},
			check: func(t *testing.T, r *http.Request) {
				if r.Header.Get("x-api-key") != "" {
					t.Errorf("a key was sent although none is configured")
				}
				if !strings.Contains(r.URL.Query().Get("fields"), "externalIds") {
					t.Errorf("fields %q", r.URL.Query().Get("fields"))
				}
			}},
		{name: "europepmc", query: "CRISPR screens T cells",
			fake: &scholarFake{path: "/search", contentType: "application/json", body: europePMCJSON},
			want: []sources.Result{
				{Title: "CRISPR screens in T cells.", URL: "https://europepmc.org/article/PMC/PMC8000001", Snippet: "We performed genome-wide screens.",
					Work: &sources.Work{Authors: []string{"Smith J", "Doe A", "Roe B"}, Year: 2021, Venue: "Nature", DOI: "10.1000/xyz123",
						PMID: "34567890", PMCID: "PMC8000001"}},
				{Title: "An older abstract-only paper.", URL: "https://pubmed.ncbi.nlm.nih.gov/11111111/",
					Work: &sources.Work{Authors: []string{"Lee K"}, Year: 1999, Venue: "Cell", PMID: "11111111"}},
			},
			check: func(t *testing.T, r *http.Request) {
				if r.URL.Query().Get("format") != "json" || r.URL.Query().Get("resultType") != "core" {
					t.Errorf("query %v", r.URL.Query())
				}
			}},
		{name: "wikipedia", query: "Raft consensus",
			fake: &scholarFake{path: "/w/rest.php/v1/search/page", contentType: "application/json", body: wikiJSON},
			want: []sources.Result{{Title: "Raft (algorithm)", URL: "/wiki/Raft_%28algorithm%29",
				Snippet: "Consensus algorithm. Raft is a consensus algorithm"}},
			check: func(t *testing.T, r *http.Request) {
				if r.URL.Query().Get("q") != "raft consensus" {
					t.Errorf("q %q", r.URL.Query().Get("q"))
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := scholarly(t, tc.name, tc.fake, map[string]string{ContactEnv: "ops@example.org"})
			got, err := s.Search(t.Context(), tc.query, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("%d results, want %d: %+v", len(got), len(tc.want), got)
			}
			for i, w := range tc.want {
				g := got[i]
				if tc.name == "wikipedia" {
					g.URL = strings.TrimPrefix(g.URL, "http://"+tc.fake.last(t).Host)
				}
				if g.Title != w.Title || g.URL != w.URL || g.Snippet != w.Snippet || g.Provider != tc.name {
					t.Errorf("result %d = %q %q %q (%s), want %q %q %q", i, g.Title, g.URL, g.Snippet, g.Provider, w.Title, w.URL, w.Snippet)
				}
				if fmt.Sprint(g.Work) != fmt.Sprint(w.Work) {
					t.Errorf("result %d work = %+v, want %+v", i, g.Work, w.Work)
				}
			}
			r := tc.fake.last(t)
			if ua := r.Header.Get("User-Agent"); !strings.HasPrefix(ua, "deepresearch") {
				t.Errorf("User-Agent %q: the services ask for a descriptive one", ua)
			}
			tc.check(t, r)
		})
	}
}

// A key given for Semantic Scholar is sent in its header; without one the service is used all the same.
func TestSemanticScholarKeyIsOptional(t *testing.T) {
	f := &scholarFake{path: "/graph/v1/paper/search", contentType: "application/json", body: s2JSON}
	s := scholarly(t, "semanticscholar", f, map[string]string{"S2_API_KEY": "s2-secret"})
	if _, err := s.Search(t.Context(), "literature graph", 3); err != nil {
		t.Fatal(err)
	}
	if got := f.last(t).Header.Get("x-api-key"); got != "s2-secret" {
		t.Errorf("x-api-key %q", got)
	}
	p, _ := Lookup("semanticscholar")
	if !p.NeedsNothing() || !strings.Contains(p.Needs(), "optional") {
		t.Errorf("semanticscholar needs %q", p.Needs())
	}
}

// Wikipedia is searched in the question's language.
func TestWikipediaFollowsTheQuestionsLanguage(t *testing.T) {
	var hosts []string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hosts = append(hosts, r.URL.Query().Get("q"))
		mu.Unlock()
		fmt.Fprint(w, `{"pages":[{"key":"共识算法","title":"共识算法","excerpt":"x"}]}`)
	}))
	defer srv.Close()
	w := &Wikipedia{c: newClient("wikipedia", Config{HTTPClient: srv.Client(), UserAgent: "t", MaxAttempts: 1, Logger: slog.New(slog.DiscardHandler)}),
		base: srv.URL + "/{lang}"}
	rs, err := w.Search(t.Context(), "Raft 共识算法 是什么", 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0].URL != srv.URL+"/zh/wiki/"+url.PathEscape("共识算法") {
		t.Fatalf("results %+v", rs)
	}
	if hosts[0] != "raft共识算法是什么" {
		t.Errorf("q %q", hosts[0])
	}
}

// Hostile or broken answers give errors or bounded results, never a panic or an unbounded allocation.
func TestScholarlyHostileAnswers(t *testing.T) {
	huge := `{"results":[{"display_name":"t","doi":"10.1/x","abstract_inverted_index":{"w":[0,1,2,99999999,-5]}}]}`
	for _, tc := range []struct {
		name, path, ctype, body string
		status                  int
		wantErr                 bool
		check                   func(t *testing.T, rs []sources.Result)
	}{
		{name: "arxiv", path: "/api/query", ctype: "application/atom+xml", body: "<feed><entry><id>", wantErr: true},
		{name: "openalex", path: "/works", ctype: "application/json", body: `{"results":[{"display_name":`, wantErr: true},
		{name: "openalex", path: "/works", ctype: "application/json", body: huge, check: func(t *testing.T, rs []sources.Result) {
			if len(rs) != 1 || rs[0].Snippet != "w w w" || rs[0].URL != "https://doi.org/10.1/x" {
				t.Errorf("results %+v: want the positions past the bound dropped", rs)
			}
		}},
		{name: "crossref", path: "/works", ctype: "application/json", body: `{"message":{"items":[{"title":[],"author":[{}],"issued":{"date-parts":[[]]}}]}}`,
			check: func(t *testing.T, rs []sources.Result) {
				if len(rs) != 0 {
					t.Errorf("a record without DOI or URL became %+v", rs)
				}
			}},
		{name: "semanticscholar", path: "/graph/v1/paper/search", ctype: "application/json", status: 400,
			body: `{"error":"Unrecognized or unsupported fields: [bogus]"}`, wantErr: true},
		{name: "europepmc", path: "/search", ctype: "text/html", body: "<html>maintenance</html>", wantErr: true},
		{name: "wikipedia", path: "/w/rest.php/v1/search/page", ctype: "application/json", body: wikiJSON, check: func(t *testing.T, rs []sources.Result) {
			for _, r := range rs {
				if strings.ContainsAny(r.URL, "\a") {
					t.Errorf("a key with a control character became %q", r.URL)
				}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := scholarly(t, tc.name, &scholarFake{path: tc.path, contentType: tc.ctype, body: tc.body, status: tc.status}, nil)
			rs, err := s.Search(t.Context(), "consensus algorithms", 5)
			if tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), tc.name) {
					t.Fatalf("err %v: want an error naming %s", err, tc.name)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, rs)
		})
	}
}

// A question with no searchable word asks no service.
func TestScholarlyQuestionWithoutKeywords(t *testing.T) {
	f := &scholarFake{path: "/api/query", contentType: "application/atom+xml", body: arxivAtom}
	s := scholarly(t, "arxiv", f, nil)
	rs, err := s.Search(t.Context(), "what is it?", 5)
	if err != nil || len(rs) != 0 || len(f.reqs) != 0 {
		t.Fatalf("results %v, err %v, %d requests", rs, err, len(f.reqs))
	}
}

// arXiv asks for one request every three seconds: a second search right after the first waits for its turn
// (here it cannot get one before its deadline, and says so) instead of being sent.
func TestArXivKeepsItsPace(t *testing.T) {
	f := &scholarFake{path: "/api/query", contentType: "application/atom+xml", body: arxivAtom}
	srv := httptest.NewServer(f)
	defer srv.Close()
	s, err := New("arxiv", Config{BaseURL: srv.URL, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.(*ArXiv).c.pace.Limit(); got != arxivPace {
		t.Fatalf("pace %v, want %v", got, arxivPace)
	}
	if _, err := s.Search(t.Context(), "raft consensus", 5); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	_, err = s.Search(ctx, "paxos consensus", 5)
	if err == nil || !strings.Contains(err.Error(), "pace") {
		t.Fatalf("second search within the pace: %v", err)
	}
	if len(f.reqs) != 1 {
		t.Errorf("%d requests sent, want 1", len(f.reqs))
	}
}

// The providers list reads as one list: every scholarly provider needs nothing, and lists parse with checks.
func TestParseList(t *testing.T) {
	got, err := ParseList(" arxiv, OpenAlex ,arxiv,,wikipedia")
	if err != nil || !slices.Equal(got, []string{"arxiv", "openalex", "wikipedia"}) {
		t.Fatalf("ParseList = %v, %v", got, err)
	}
	if _, err := ParseList("arxiv,nosuch"); err == nil || !strings.Contains(err.Error(), "nosuch") {
		t.Fatalf("unknown name: %v", err)
	}
	for _, p := range Providers() {
		if p.Scholarly && !p.NeedsNothing() {
			t.Errorf("%s is scholarly but needs %s", p.Name, p.Needs())
		}
	}
}
