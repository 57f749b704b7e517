// Package state holds one research run's shared state in an embedded SQLite database (modernc.org/sqlite, pure
// Go): the evidence pool, the citation map and the research log — the three tables agents share instead of
// conversation history — plus what resume needs (step markers with their outputs, the index of fetched
// documents, key/value metadata).
//
// Every write is checked: a row with a malformed source, a confidence outside 0..1 or an unknown stage is
// refused with an error that names the field. Evidence writes are idempotent, keyed by the source and the
// normalised quote, so a step re-run after a crash never duplicates evidence.
//
// A DB is safe for concurrent use; writes are serialised on one connection.
package state

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the pure-Go SQLite driver

	"github.com/deepresearch/deepresearch/lexical"
	"github.com/deepresearch/deepresearch/sources"
)

// Stages accepted in the research log.
var Stages = []string{"scope", "search", "read", "verify", "synth"}

// Evidence status values.
const (
	Accepted = "accepted"
	Rejected = "rejected"
)

// ErrNotFound is returned (wrapped) when a looked-up row does not exist.
var ErrNotFound = errors.New("state: not found")

const schema = `
CREATE TABLE IF NOT EXISTS meta (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS evidence (
	seq          INTEGER PRIMARY KEY,
	id           TEXT NOT NULL UNIQUE,
	key          TEXT NOT NULL UNIQUE,
	sub_question TEXT NOT NULL,
	claim        TEXT NOT NULL,
	quote        TEXT NOT NULL,
	source       TEXT NOT NULL,
	title        TEXT NOT NULL DEFAULT '',
	confidence   REAL NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
	round        INTEGER NOT NULL CHECK (round >= 1),
	status       TEXT NOT NULL CHECK (status IN ('accepted', 'rejected')),
	reason       TEXT NOT NULL DEFAULT '',
	created      TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS citations (
	conclusion_id TEXT NOT NULL,
	text          TEXT NOT NULL,
	evidence_id   TEXT NOT NULL REFERENCES evidence(id),
	source        TEXT NOT NULL,
	n             INTEGER NOT NULL,
	PRIMARY KEY (conclusion_id, evidence_id)
);
CREATE TABLE IF NOT EXISTS log (
	seq          INTEGER PRIMARY KEY AUTOINCREMENT,
	time         TEXT NOT NULL,
	stage        TEXT NOT NULL CHECK (stage IN ('scope', 'search', 'read', 'verify', 'synth')),
	round        INTEGER NOT NULL DEFAULT 0,
	sub_question TEXT NOT NULL DEFAULT '',
	decision     TEXT NOT NULL,
	detail       TEXT NOT NULL DEFAULT '',
	gaps         TEXT NOT NULL DEFAULT '[]',
	retries      INTEGER NOT NULL DEFAULT 0,
	duration_ms  INTEGER NOT NULL DEFAULT 0,
	tokens       INTEGER NOT NULL DEFAULT 0,
	cost_usd     REAL NOT NULL DEFAULT 0,
	error        TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS steps (
	name    TEXT PRIMARY KEY,
	data    TEXT NOT NULL DEFAULT '',
	done_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS documents (
	norm_url     TEXT PRIMARY KEY,
	url          TEXT NOT NULL,
	final_url    TEXT NOT NULL DEFAULT '',
	title        TEXT NOT NULL DEFAULT '',
	hash         TEXT NOT NULL,
	path         TEXT NOT NULL,
	content_type TEXT NOT NULL DEFAULT '',
	truncated    INTEGER NOT NULL DEFAULT 0,
	fetched_at   TEXT NOT NULL
);
`

// DB is one run's state database.
type DB struct {
	db *sql.DB
}

// Open opens (creating if needed) the state database at path.
func Open(ctx context.Context, path string) (*DB, error) {
	return open(ctx, path, false)
}

// OpenReadOnly opens an existing state database for reading, for viewers of a run that may still be writing.
func OpenReadOnly(ctx context.Context, path string) (*DB, error) {
	return open(ctx, path, true)
}

func open(ctx context.Context, path string, ro bool) (*DB, error) {
	dsn, err := sqliteURI(path, ro)
	if err != nil {
		return nil, fmt.Errorf("state: open %s: %w", path, err)
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("state: open %s: %w", path, err)
	}
	// One connection serialises writers: SQLite allows one anyway, and this keeps busy errors out.
	db.SetMaxOpenConns(1)
	if ro {
		if err := db.PingContext(ctx); err != nil {
			db.Close()
			return nil, fmt.Errorf("state: open %s: %w", path, err)
		}
	} else if _, err := db.ExecContext(ctx, schema); err != nil {
		db.Close()
		return nil, fmt.Errorf("state: create schema in %s: %w", path, err)
	}
	return &DB{db: db}, nil
}

// sqliteURI builds the SQLite address of the database file at path as a file: URI with net/url, so that any
// character a folder name may hold ('#', '?', '%', spaces, non-ASCII) stays part of the path instead of
// starting the query or the fragment and sending the database somewhere else.
func sqliteURI(path string, ro bool) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	q := url.Values{"_pragma": {"busy_timeout(10000)", "foreign_keys(1)"}}
	if ro {
		q.Set("mode", "ro")
	} else {
		q["_pragma"] = append(q["_pragma"], "journal_mode(WAL)", "synchronous(NORMAL)")
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: q.Encode()}
	if !strings.HasPrefix(u.Path, "/") { // a Windows drive path: file:///C:/...
		u.Path = "/" + u.Path
	}
	return u.String(), nil
}

// Close closes the database.
func (d *DB) Close() error { return d.db.Close() }

func now() string { return time.Now().UTC().Format(time.RFC3339Nano) }

func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}

// ---- meta and steps ----

// SetMeta stores a key/value pair, replacing an earlier value.
func (d *DB) SetMeta(ctx context.Context, key, value string) error {
	_, err := d.db.ExecContext(ctx, `INSERT INTO meta(key, value) VALUES(?, ?)
		ON CONFLICT(key) DO UPDATE SET value = excluded.value`, key, value)
	if err != nil {
		return fmt.Errorf("state: set %s: %w", key, err)
	}
	return nil
}

// Meta returns the value stored under key, or "" and false.
func (d *DB) Meta(ctx context.Context, key string) (string, bool, error) {
	var v string
	err := d.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("state: get %s: %w", key, err)
	}
	return v, true, nil
}

// MarkStep records that the named step completed, with its output (JSON-encoded). Marking a step twice keeps
// the first record: a completed step's output never changes.
func (d *DB) MarkStep(ctx context.Context, name string, data any) error {
	b, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("state: step %s: encode: %w", name, err)
	}
	if _, err := d.db.ExecContext(ctx, `INSERT INTO steps(name, data, done_at) VALUES(?, ?, ?)
		ON CONFLICT(name) DO NOTHING`, name, string(b), now()); err != nil {
		return fmt.Errorf("state: step %s: %w", name, err)
	}
	return nil
}

// Step reports whether the named step completed and, if so, decodes its output into out (which may be nil).
func (d *DB) Step(ctx context.Context, name string, out any) (bool, error) {
	var data string
	err := d.db.QueryRowContext(ctx, `SELECT data FROM steps WHERE name = ?`, name).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("state: step %s: %w", name, err)
	}
	if out != nil {
		if err := json.Unmarshal([]byte(data), out); err != nil {
			return false, fmt.Errorf("state: step %s: decode: %w", name, err)
		}
	}
	return true, nil
}

// StepNames lists completed steps whose name starts with prefix, in completion order.
func (d *DB) StepNames(ctx context.Context, prefix string) ([]string, error) {
	rows, err := d.db.QueryContext(ctx, `SELECT name FROM steps WHERE substr(name, 1, ?) = ? ORDER BY rowid`, len(prefix), prefix)
	if err != nil {
		return nil, fmt.Errorf("state: steps %s: %w", prefix, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

// ---- evidence pool ----

// Evidence is one row of the evidence pool.
type Evidence struct {
	ID          string
	SubQuestion string
	Claim       string
	Quote       string
	Source      string
	Title       string
	Confidence  float64
	Round       int
	Status      string
	Reason      string
	Created     time.Time
}

var anchorRe = regexp.MustCompile(`^L\d+(-L\d+)?$`)

// CheckSource reports whether s is a usable source: an absolute http(s) URL with a host, or a file:// URL with
// an absolute path and an optional line anchor (#L3 or #L3-L9).
func CheckSource(s string) error {
	if strings.TrimSpace(s) == "" {
		return errors.New("source is empty")
	}
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("source %q is not a URL: %v", s, err)
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		if u.Host == "" {
			return fmt.Errorf("source %q has no host", s)
		}
	case "file":
		if !strings.HasPrefix(u.Path, "/") {
			return fmt.Errorf("source %q: a file source needs an absolute path", s)
		}
		if u.Fragment != "" && !anchorRe.MatchString(u.Fragment) {
			return fmt.Errorf("source %q: a file anchor must look like #L3 or #L3-L9", s)
		}
	default:
		return fmt.Errorf("source %q: want an http(s) URL or a file:// anchor", s)
	}
	return nil
}

// CheckEvidence validates an evidence row before it is written.
func CheckEvidence(e Evidence) error {
	var problems []string
	if strings.TrimSpace(e.SubQuestion) == "" {
		problems = append(problems, "sub-question is empty")
	}
	if strings.TrimSpace(e.Claim) == "" {
		problems = append(problems, "claim is empty")
	}
	if strings.TrimSpace(e.Quote) == "" {
		problems = append(problems, "quote is empty")
	}
	if err := CheckSource(e.Source); err != nil {
		problems = append(problems, err.Error())
	}
	if math.IsNaN(e.Confidence) || e.Confidence < 0 || e.Confidence > 1 {
		problems = append(problems, fmt.Sprintf("confidence %v outside 0..1", e.Confidence))
	}
	if e.Round < 1 {
		problems = append(problems, fmt.Sprintf("round %d < 1", e.Round))
	}
	if e.Status != Accepted && e.Status != Rejected {
		problems = append(problems, fmt.Sprintf("status %q is not accepted or rejected", e.Status))
	}
	if len(problems) > 0 {
		return fmt.Errorf("state: evidence refused: %s", strings.Join(problems, "; "))
	}
	return nil
}

// EvidenceKey is the stable identity of an evidence item: the source (normalised) and the quote (white space
// normalised). The same quote from the same source is the same evidence, whoever extracted it and when.
func EvidenceKey(source, quote string) string {
	h := sha256.Sum256([]byte(sources.NormalizeURL(source) + "\x00" + lexical.NormalizeSpace(quote)))
	return hex.EncodeToString(h[:16])
}

// AddEvidence writes e to the pool and returns its id ("e1", "e2", …). If the same evidence (same EvidenceKey)
// is already there, nothing is written and the existing id is returned with added false.
func (d *DB) AddEvidence(ctx context.Context, e Evidence) (id string, added bool, err error) {
	if err := CheckEvidence(e); err != nil {
		return "", false, err
	}
	key := EvidenceKey(e.Source, e.Quote)
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return "", false, fmt.Errorf("state: add evidence: %w", err)
	}
	defer tx.Rollback()
	err = tx.QueryRowContext(ctx, `SELECT id FROM evidence WHERE key = ?`, key).Scan(&id)
	if err == nil {
		return id, false, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return "", false, fmt.Errorf("state: add evidence: %w", err)
	}
	var seq int64
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) + 1 FROM evidence`).Scan(&seq); err != nil {
		return "", false, fmt.Errorf("state: add evidence: %w", err)
	}
	id = fmt.Sprintf("e%d", seq)
	if _, err := tx.ExecContext(ctx, `INSERT INTO evidence(seq, id, key, sub_question, claim, quote, source, title,
		confidence, round, status, reason, created) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		seq, id, key, e.SubQuestion, e.Claim, e.Quote, e.Source, e.Title, e.Confidence, e.Round, e.Status,
		e.Reason, now()); err != nil {
		return "", false, fmt.Errorf("state: add evidence: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return "", false, fmt.Errorf("state: add evidence: %w", err)
	}
	return id, true, nil
}

// SetEvidenceStatus changes an item's status (the verifier's rejections).
func (d *DB) SetEvidenceStatus(ctx context.Context, id, status, reason string) error {
	if status != Accepted && status != Rejected {
		return fmt.Errorf("state: evidence %s: status %q is not accepted or rejected", id, status)
	}
	res, err := d.db.ExecContext(ctx, `UPDATE evidence SET status = ?, reason = ? WHERE id = ?`, status, reason, id)
	if err != nil {
		return fmt.Errorf("state: evidence %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("state: evidence %s: %w", id, ErrNotFound)
	}
	return nil
}

// Evidence returns the pool in insertion order; with status set, only items of that status.
func (d *DB) Evidence(ctx context.Context, status string) ([]Evidence, error) {
	q := `SELECT id, sub_question, claim, quote, source, title, confidence, round, status, reason, created
		FROM evidence`
	var args []any
	if status != "" {
		q += ` WHERE status = ?`
		args = append(args, status)
	}
	rows, err := d.db.QueryContext(ctx, q+` ORDER BY seq`, args...)
	if err != nil {
		return nil, fmt.Errorf("state: evidence: %w", err)
	}
	defer rows.Close()
	var out []Evidence
	for rows.Next() {
		var e Evidence
		var created string
		if err := rows.Scan(&e.ID, &e.SubQuestion, &e.Claim, &e.Quote, &e.Source, &e.Title, &e.Confidence,
			&e.Round, &e.Status, &e.Reason, &created); err != nil {
			return nil, fmt.Errorf("state: evidence: %w", err)
		}
		e.Created = parseTime(created)
		out = append(out, e)
	}
	return out, rows.Err()
}

// ---- citation map ----

// Citation is one row of the citation map: a conclusion (a published sentence) → one evidence item → its source.
type Citation struct {
	ConclusionID string
	Text         string
	EvidenceID   string
	Source       string
	N            int // the published citation number
}

// SetCitations replaces the citation map. Every row must point to accepted evidence.
func (d *DB) SetCitations(ctx context.Context, cs []Citation) error {
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("state: citations: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `DELETE FROM citations`); err != nil {
		return fmt.Errorf("state: citations: %w", err)
	}
	for _, c := range cs {
		var status string
		err := tx.QueryRowContext(ctx, `SELECT status FROM evidence WHERE id = ?`, c.EvidenceID).Scan(&status)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("state: citation %s refused: evidence %s does not exist", c.ConclusionID, c.EvidenceID)
		}
		if err != nil {
			return fmt.Errorf("state: citations: %w", err)
		}
		if status != Accepted {
			return fmt.Errorf("state: citation %s refused: evidence %s is %s", c.ConclusionID, c.EvidenceID, status)
		}
		if err := CheckSource(c.Source); err != nil {
			return fmt.Errorf("state: citation %s refused: %v", c.ConclusionID, err)
		}
		if c.N < 1 {
			return fmt.Errorf("state: citation %s refused: number %d < 1", c.ConclusionID, c.N)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO citations(conclusion_id, text, evidence_id, source, n)
			VALUES(?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`, c.ConclusionID, c.Text, c.EvidenceID, c.Source, c.N); err != nil {
			return fmt.Errorf("state: citations: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("state: citations: %w", err)
	}
	return nil
}

// Citations returns the citation map in conclusion order.
func (d *DB) Citations(ctx context.Context) ([]Citation, error) {
	rows, err := d.db.QueryContext(ctx, `SELECT conclusion_id, text, evidence_id, source, n FROM citations
		ORDER BY CAST(substr(conclusion_id, 2) AS INTEGER), n`)
	if err != nil {
		return nil, fmt.Errorf("state: citations: %w", err)
	}
	defer rows.Close()
	var out []Citation
	for rows.Next() {
		var c Citation
		if err := rows.Scan(&c.ConclusionID, &c.Text, &c.EvidenceID, &c.Source, &c.N); err != nil {
			return nil, fmt.Errorf("state: citations: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// ---- research log ----

// LogEntry is one row of the research log.
type LogEntry struct {
	Time        time.Time
	Stage       string
	Round       int
	SubQuestion string
	// Decision is what happened, in a word or two: "planned", "searched", "read", "skipped", "early stop",
	// "rejected", "verdict", "re-search", "error", "retry", "cut short", "integrity", "published".
	Decision string
	Detail   string
	Gaps     []string
	Retries  int
	Duration time.Duration
	Tokens   int
	CostUSD  float64
	Error    string
}

// CheckStage reports whether s is one of Stages.
func CheckStage(s string) error {
	for _, st := range Stages {
		if s == st {
			return nil
		}
	}
	return fmt.Errorf("stage %q is not one of %s", s, strings.Join(Stages, "|"))
}

// AddLog appends a research-log row.
func (d *DB) AddLog(ctx context.Context, e LogEntry) error {
	if err := CheckStage(e.Stage); err != nil {
		return fmt.Errorf("state: log entry refused: %v", err)
	}
	if strings.TrimSpace(e.Decision) == "" {
		return errors.New("state: log entry refused: decision is empty")
	}
	if e.Retries < 0 || e.Tokens < 0 || e.CostUSD < 0 || math.IsNaN(e.CostUSD) {
		return fmt.Errorf("state: log entry refused: negative retries, tokens or cost (%d, %d, %v)", e.Retries, e.Tokens, e.CostUSD)
	}
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	gaps, _ := json.Marshal(append([]string{}, e.Gaps...))
	if _, err := d.db.ExecContext(ctx, `INSERT INTO log(time, stage, round, sub_question, decision, detail, gaps,
		retries, duration_ms, tokens, cost_usd, error) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		e.Time.UTC().Format(time.RFC3339Nano), e.Stage, e.Round, e.SubQuestion, e.Decision, e.Detail, string(gaps),
		e.Retries, e.Duration.Milliseconds(), e.Tokens, e.CostUSD, e.Error); err != nil {
		return fmt.Errorf("state: log: %w", err)
	}
	return nil
}

// Log returns the research log in order; with stage set, only that stage's rows.
func (d *DB) Log(ctx context.Context, stage string) ([]LogEntry, error) {
	q := `SELECT time, stage, round, sub_question, decision, detail, gaps, retries, duration_ms, tokens, cost_usd,
		error FROM log`
	var args []any
	if stage != "" {
		q += ` WHERE stage = ?`
		args = append(args, stage)
	}
	rows, err := d.db.QueryContext(ctx, q+` ORDER BY seq`, args...)
	if err != nil {
		return nil, fmt.Errorf("state: log: %w", err)
	}
	defer rows.Close()
	var out []LogEntry
	for rows.Next() {
		var e LogEntry
		var t, gaps string
		var ms int64
		if err := rows.Scan(&t, &e.Stage, &e.Round, &e.SubQuestion, &e.Decision, &e.Detail, &gaps, &e.Retries,
			&ms, &e.Tokens, &e.CostUSD, &e.Error); err != nil {
			return nil, fmt.Errorf("state: log: %w", err)
		}
		e.Time = parseTime(t)
		e.Duration = time.Duration(ms) * time.Millisecond
		_ = json.Unmarshal([]byte(gaps), &e.Gaps)
		out = append(out, e)
	}
	return out, rows.Err()
}

// ---- fetched documents ----

// Document indexes one fetched document whose text is stored in the run folder at Path (relative to it).
type Document struct {
	URL         string
	FinalURL    string
	Title       string
	Hash        string
	Path        string
	ContentType string
	Truncated   bool
	FetchedAt   time.Time
}

// PutDocument records a fetched document under its normalised URL (first write wins).
func (d *DB) PutDocument(ctx context.Context, doc Document) error {
	if err := CheckSource(doc.URL); err != nil {
		return fmt.Errorf("state: document refused: %v", err)
	}
	if doc.Hash == "" || doc.Path == "" {
		return fmt.Errorf("state: document %s refused: no hash or path", doc.URL)
	}
	if doc.FetchedAt.IsZero() {
		doc.FetchedAt = time.Now()
	}
	if _, err := d.db.ExecContext(ctx, `INSERT INTO documents(norm_url, url, final_url, title, hash, path,
		content_type, truncated, fetched_at) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(norm_url) DO NOTHING`,
		sources.NormalizeURL(doc.URL), doc.URL, doc.FinalURL, doc.Title, doc.Hash, doc.Path, doc.ContentType,
		doc.Truncated, doc.FetchedAt.UTC().Format(time.RFC3339Nano)); err != nil {
		return fmt.Errorf("state: document %s: %w", doc.URL, err)
	}
	return nil
}

// Document looks a fetched document up by URL (any form that normalises the same).
func (d *DB) Document(ctx context.Context, rawURL string) (*Document, error) {
	var doc Document
	var t string
	err := d.db.QueryRowContext(ctx, `SELECT url, final_url, title, hash, path, content_type, truncated, fetched_at
		FROM documents WHERE norm_url = ?`, sources.NormalizeURL(rawURL)).Scan(&doc.URL, &doc.FinalURL, &doc.Title,
		&doc.Hash, &doc.Path, &doc.ContentType, &doc.Truncated, &t)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("state: document %s: %w", rawURL, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("state: document %s: %w", rawURL, err)
	}
	doc.FetchedAt = parseTime(t)
	return &doc, nil
}

// Documents lists every fetched document.
func (d *DB) Documents(ctx context.Context) ([]Document, error) {
	rows, err := d.db.QueryContext(ctx, `SELECT url, final_url, title, hash, path, content_type, truncated, fetched_at
		FROM documents ORDER BY rowid`)
	if err != nil {
		return nil, fmt.Errorf("state: documents: %w", err)
	}
	defer rows.Close()
	var out []Document
	for rows.Next() {
		var doc Document
		var t string
		if err := rows.Scan(&doc.URL, &doc.FinalURL, &doc.Title, &doc.Hash, &doc.Path, &doc.ContentType,
			&doc.Truncated, &t); err != nil {
			return nil, fmt.Errorf("state: documents: %w", err)
		}
		doc.FetchedAt = parseTime(t)
		out = append(out, doc)
	}
	return out, rows.Err()
}
