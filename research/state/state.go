// Package state holds one research run's shared state in an embedded SQLite database (modernc.org/sqlite, pure
// Go): the evidence pool, the citation map and the research log — the three tables agents share instead of
// conversation history — plus what resume needs (step markers with their outputs, the index of fetched
// documents, key/value metadata).
//
// Every write is checked: a row with a malformed source, a confidence outside 0..1 or an unknown stage is
// refused with an error that names the field. Evidence writes are idempotent, keyed by the source and the
// normalised quote, so a step re-run after a crash never duplicates evidence.
//
// The state lives in a SQLite file (the default, one per run folder) or, for runs shared by many machines, in a
// PostgreSQL database (one schema per run; see OpenRun). Schemas are versioned and migrated on open.
//
// A DB is safe for concurrent use: reads use a pool of connections, writes one writer that commits concurrent
// writes together.
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
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // the pure-Go SQLite driver

	"github.com/deepresearch/deepresearch/base/runfolder"
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

// CarriedPrefix starts the sub-question of an evidence item carried from an earlier run (a follow-up's). When
// the run finds the same quote again, AddEvidence pools the item under the sub-question that found it.
const CarriedPrefix = "earlier:"

// ErrNotFound is returned (wrapped) when a looked-up row does not exist.
var ErrNotFound = errors.New("state: not found")

// DB is one run's state: a SQLite file, or the run's schema in a PostgreSQL database. Reads go to a pool of
// readers; writes go through one writer that commits whatever writes are waiting together in one transaction
// (group commit), so a wide fan-out of readers and analysts shares a few commits instead of queueing for one each.
// Statements are prepared once per connection.
type DB struct {
	d      dialect
	r      *sql.DB // readers
	w      *sql.DB // the writer; nil when opened read-only
	closed chan struct{}

	stmtMu sync.Mutex
	stmts  map[stmtKey]*sql.Stmt
	wanted map[string]bool // write statements to prepare once the writer is free

	wmu      sync.Mutex
	pending  []*writeOp
	flushing bool
}

type stmtKey struct {
	write bool
	q     string
}

// Open opens (creating and migrating if needed) the SQLite state database at path.
func Open(ctx context.Context, path string) (*DB, error) {
	return openSQLite(ctx, path, false)
}

// OpenReadOnly opens an existing SQLite state database for reading, for viewers of a run that may still be
// writing.
func OpenReadOnly(ctx context.Context, path string) (*DB, error) {
	return openSQLite(ctx, path, true)
}

// OpenFinished opens the SQLite state of a run that has finished for reading without leaving a trace in its
// folder: when the database has no write-ahead log beside it (a run that closed cleanly), it is opened immutable,
// so SQLite creates no -wal or -shm file; otherwise as OpenReadOnly. Nothing may write the run meanwhile.
func OpenFinished(ctx context.Context, path string) (*DB, error) {
	if err := checkSQLiteFiles(path); err != nil {
		return nil, fmt.Errorf("state: open %s: %w", path, err)
	}
	dir, name := runfolder.Split(path)
	if runfolder.Check(dir, name+"-wal") == nil {
		if _, err := os.Lstat(path + "-wal"); err == nil {
			return openSQLite(ctx, path, true)
		}
	}
	return openSQLiteReader(ctx, path, sqliteImmutable)
}

// openSQLiteReader opens a SQLite state for reading only, in mode (read-only or immutable).
func openSQLiteReader(ctx context.Context, path string, mode sqliteMode) (*DB, error) {
	dsn, err := sqliteURI(path, mode)
	if err != nil {
		return nil, fmt.Errorf("state: open %s: %w", path, err)
	}
	r, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("state: open %s: %w", path, err)
	}
	r.SetMaxOpenConns(readers)
	if err := r.PingContext(ctx); err != nil {
		r.Close()
		return nil, fmt.Errorf("state: open %s: %w", path, err)
	}
	return newDB(sqliteDialect, r, nil), nil
}

// OpenRun opens run runID's state at location: a postgres:// URL (the run's schema, created and migrated when
// missing) or else the path of a SQLite file.
func OpenRun(ctx context.Context, location, runID string) (*DB, error) {
	return openRun(ctx, location, runID, true)
}

// OpenRunReadOnly opens an existing run's state for reading; a missing PostgreSQL run is ErrNotFound (wrapped).
func OpenRunReadOnly(ctx context.Context, location, runID string) (*DB, error) {
	return openRun(ctx, location, runID, false)
}

func openRun(ctx context.Context, location, runID string, write bool) (*DB, error) {
	if !IsPostgresURL(location) {
		return openSQLite(ctx, location, !write)
	}
	db, err := openPostgres(ctx, location, runID, write)
	if err != nil {
		return nil, fmt.Errorf("state: open run %s in PostgreSQL: %w", runID, err)
	}
	w := db
	if !write {
		w = nil
	}
	return newDB(postgresDialect, db, w), nil
}

func newDB(d dialect, r, w *sql.DB) *DB {
	return &DB{d: d, r: r, w: w, closed: make(chan struct{}), stmts: map[stmtKey]*sql.Stmt{}}
}

// readers is the size of SQLite's reader pool (WAL lets readers run beside the one writer).
const readers = 4

// sqliteFiles are the files SQLite opens by name beside the database: a FIFO or a link out of the run folder
// under any of them would hang or redirect SQLite's own open.
var sqliteFiles = []string{"", "-wal", "-shm", "-journal"}

// checkSQLiteFiles refuses a state whose database file or one of its siblings is not a regular file inside
// its folder, before SQLite opens them by path.
func checkSQLiteFiles(path string) error {
	dir, name := runfolder.Split(path)
	for _, suffix := range sqliteFiles {
		if err := runfolder.Check(dir, name+suffix); err != nil {
			return err
		}
	}
	return nil
}

func openSQLite(ctx context.Context, path string, ro bool) (*DB, error) {
	if err := checkSQLiteFiles(path); err != nil {
		return nil, fmt.Errorf("state: open %s: %w", path, err)
	}
	if ro {
		return openSQLiteReader(ctx, path, sqliteReadOnly)
	}
	wdsn, err := sqliteURI(path, sqliteWriter)
	if err != nil {
		return nil, fmt.Errorf("state: open %s: %w", path, err)
	}
	w, err := sql.Open("sqlite", wdsn)
	if err != nil {
		return nil, fmt.Errorf("state: open %s: %w", path, err)
	}
	// One writer connection: SQLite allows one writer anyway, and this keeps busy errors out.
	w.SetMaxOpenConns(1)
	if err := migrate(ctx, w, sqliteDialect, ""); err != nil {
		w.Close()
		return nil, fmt.Errorf("state: migrate %s: %w", path, err)
	}
	rdsn, _ := sqliteURI(path, sqliteReader)
	r, err := sql.Open("sqlite", rdsn)
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("state: open %s: %w", path, err)
	}
	r.SetMaxOpenConns(readers)
	return newDB(sqliteDialect, r, w), nil
}

// How a SQLite connection is opened.
type sqliteMode int

const (
	sqliteReadOnly  sqliteMode = iota // an existing file, read only
	sqliteWriter                      // the one writer: WAL, write transactions take the lock when they begin
	sqliteReader                      // a reader beside the writer
	sqliteImmutable                   // a finished run's file, read only, with no log beside it
)

// sqliteURI builds the SQLite address of the database file at path as a file: URI with net/url, so that any
// character a folder name may hold ('#', '?', '%', spaces, non-ASCII) stays part of the path instead of
// starting the query or the fragment and sending the database somewhere else.
func sqliteURI(path string, mode sqliteMode) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	q := url.Values{"_pragma": {"busy_timeout(10000)", "foreign_keys(1)"}}
	switch mode {
	case sqliteReadOnly:
		q.Set("mode", "ro")
	case sqliteImmutable:
		q.Set("mode", "ro")
		q.Set("immutable", "1")
	case sqliteWriter:
		q["_pragma"] = append(q["_pragma"], "journal_mode(WAL)", "synchronous(NORMAL)")
		// BEGIN IMMEDIATE: a write transaction never starts as a reader that another process's commit could
		// leave unable to write (SQLITE_BUSY_SNAPSHOT, which no busy timeout cures).
		q.Set("_txlock", "immediate")
	case sqliteReader:
		q["_pragma"] = append(q["_pragma"], "query_only(1)")
	}
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: q.Encode()}
	if !strings.HasPrefix(u.Path, "/") { // a Windows drive path: file:///C:/...
		u.Path = "/" + u.Path
	}
	return u.String(), nil
}

// Backend is SQLite or Postgres.
func (d *DB) Backend() string { return d.d.name }

// Close closes the database.
func (d *DB) Close() error {
	d.stmtMu.Lock()
	for _, s := range d.stmts {
		s.Close()
	}
	d.stmts = map[stmtKey]*sql.Stmt{}
	d.stmtMu.Unlock()
	err := d.r.Close()
	if d.w != nil && d.w != d.r {
		err = errors.Join(err, d.w.Close())
	}
	return err
}

// stmt returns q prepared on the reader pool.
func (d *DB) stmt(ctx context.Context, q string) (*sql.Stmt, error) {
	k := stmtKey{false, q}
	d.stmtMu.Lock()
	defer d.stmtMu.Unlock()
	if s, ok := d.stmts[k]; ok {
		return s, nil
	}
	s, err := d.r.PrepareContext(ctx, d.d.rebind(q))
	if err != nil {
		return nil, err
	}
	d.stmts[k] = s
	return s, nil
}

// query runs a read on the reader pool.
func (d *DB) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	s, err := d.stmt(ctx, q)
	if err != nil {
		return nil, err
	}
	return s.QueryContext(ctx, args...)
}

func (d *DB) queryRow(ctx context.Context, q string, args ...any) *sql.Row {
	s, err := d.stmt(ctx, q)
	if err != nil {
		// A failed prepare surfaces from Scan, as database/sql does for QueryRow.
		return d.r.QueryRowContext(ctx, d.d.rebind(q), args...)
	}
	return s.QueryRowContext(ctx, args...)
}

// wtx is one write's view of the group-commit transaction.
type wtx struct {
	d  *DB
	tx *sql.Tx
	// stmts are this transaction's statements by query, for the writes that run a statement many times.
	stmts map[string]*sql.Stmt
}

// The writer has one connection, which a batch's transaction holds: a write statement met for the first time
// is prepared in the transaction (closed when it ends) and prepared on the writer once the transaction has ended.
func (t wtx) stmt(ctx context.Context, q string) (*sql.Stmt, error) {
	if s, ok := t.stmts[q]; ok {
		return s, nil
	}
	var s *sql.Stmt
	if p := t.d.prepared(q); p != nil {
		s = t.tx.StmtContext(ctx, p)
	} else {
		var err error
		if s, err = t.tx.PrepareContext(ctx, t.d.d.rebind(q)); err != nil {
			return nil, err
		}
	}
	t.stmts[q] = s
	return s, nil
}

func (t wtx) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	s, err := t.stmt(ctx, q)
	if err != nil {
		return nil, err
	}
	return s.ExecContext(ctx, args...)
}

func (t wtx) queryRow(ctx context.Context, q string, args ...any) *sql.Row {
	s, err := t.stmt(ctx, q)
	if err != nil {
		// A failed prepare surfaces from Scan, as database/sql does for QueryRow.
		return t.tx.QueryRowContext(ctx, t.d.d.rebind(q), args...)
	}
	return s.QueryRowContext(ctx, args...)
}

// prepared returns the writer's statement for q, or nil after noting q to be prepared.
func (d *DB) prepared(q string) *sql.Stmt {
	d.stmtMu.Lock()
	defer d.stmtMu.Unlock()
	if s, ok := d.stmts[stmtKey{true, q}]; ok {
		return s
	}
	if d.wanted == nil {
		d.wanted = map[string]bool{}
	}
	d.wanted[q] = true
	return nil
}

// prepareWanted prepares, on the writer, the write statements met since the last call. It runs only between
// two batches, when the writer's connection is free.
func (d *DB) prepareWanted(ctx context.Context) {
	d.stmtMu.Lock()
	defer d.stmtMu.Unlock()
	for q := range d.wanted {
		if s, err := d.w.PrepareContext(ctx, d.d.rebind(q)); err == nil {
			d.stmts[stmtKey{true, q}] = s
		}
	}
	d.wanted = nil
}

type writeOp struct {
	ctx  context.Context
	fn   func(context.Context, wtx) error
	done chan struct{}
	err  error
}

// maxBatch bounds the writes one transaction commits.
const maxBatch = 256

// ErrReadOnly is returned (wrapped) by writes to a database opened read-only.
var ErrReadOnly = errors.New("state: opened read-only")

// write runs fn in a write transaction shared with the other writes waiting at the same moment and returns once
// that transaction committed (or fn's changes were rolled back). A failing write never takes the others down:
// each runs inside its own savepoint.
func (d *DB) write(ctx context.Context, fn func(context.Context, wtx) error) error {
	if d.w == nil {
		return ErrReadOnly
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	op := &writeOp{ctx: ctx, fn: fn, done: make(chan struct{})}
	d.wmu.Lock()
	d.pending = append(d.pending, op)
	if d.flushing {
		d.wmu.Unlock()
		<-op.done
		return op.err
	}
	d.flushing = true
	for len(d.pending) > 0 {
		n := min(len(d.pending), maxBatch)
		batch := d.pending[:n:n]
		d.pending = d.pending[n:]
		d.wmu.Unlock()
		d.commit(batch)
		d.wmu.Lock()
	}
	d.flushing = false
	d.wmu.Unlock()
	<-op.done
	return op.err
}

func (d *DB) commit(batch []*writeOp) {
	finish := func(err error) {
		for _, op := range batch {
			if op.err == nil {
				op.err = err
			}
			close(op.done)
		}
	}
	ctx := context.WithoutCancel(batch[0].ctx)
	tx, err := d.w.BeginTx(ctx, nil)
	if err != nil {
		finish(err)
		return
	}
	t := wtx{d: d, tx: tx, stmts: map[string]*sql.Stmt{}}
	savepoints := len(batch) > 1
	for _, op := range batch {
		if err := op.ctx.Err(); err != nil {
			op.err = err
			continue
		}
		if savepoints {
			if _, err := tx.ExecContext(ctx, "SAVEPOINT w"); err != nil {
				op.err = err
				continue
			}
		}
		op.err = op.fn(op.ctx, t)
		if !savepoints {
			continue
		}
		stmt := "RELEASE SAVEPOINT w"
		if op.err != nil {
			stmt = "ROLLBACK TO SAVEPOINT w"
		}
		if _, err := tx.ExecContext(ctx, stmt); err != nil && op.err == nil {
			op.err = err
		}
		if op.err != nil {
			_, _ = tx.ExecContext(ctx, "RELEASE SAVEPOINT w")
		}
	}
	if err := tx.Commit(); err != nil {
		for _, op := range batch {
			op.err = err
		}
	}
	d.prepareWanted(ctx)
	finish(nil)
}

func now() string { return time.Now().UTC().Format(time.RFC3339Nano) }

func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}

// ---- meta and steps ----

// SetMeta stores a key/value pair, replacing an earlier value.
func (d *DB) SetMeta(ctx context.Context, key, value string) error {
	if err := d.write(ctx, setMeta(key, value)); err != nil {
		return fmt.Errorf("state: set %s: %w", key, err)
	}
	return nil
}

func setMeta(key, value string) func(context.Context, wtx) error {
	return func(ctx context.Context, t wtx) error {
		_, err := t.exec(ctx, `INSERT INTO meta(key, value) VALUES(?, ?)
		ON CONFLICT(key) DO UPDATE SET value = excluded.value`, key, value)
		return err
	}
}

// Meta returns the value stored under key, or "" and false.
func (d *DB) Meta(ctx context.Context, key string) (string, bool, error) {
	var v string
	err := d.queryRow(ctx, `SELECT value FROM meta WHERE key = ?`, key).Scan(&v)
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
	op, err := markStep(name, data)
	if err != nil {
		return err
	}
	if err := d.write(ctx, op); err != nil {
		return fmt.Errorf("state: step %s: %w", name, err)
	}
	return nil
}

func markStep(name string, data any) (func(context.Context, wtx) error, error) {
	b, err := json.Marshal(data)
	if err != nil {
		return nil, fmt.Errorf("state: step %s: encode: %w", name, err)
	}
	return func(ctx context.Context, t wtx) error {
		_, err := t.exec(ctx, `INSERT INTO steps(name, data, done_at) VALUES(?, ?, ?)
		ON CONFLICT(name) DO NOTHING`, name, string(b), now())
		return err
	}, nil
}

// Step reports whether the named step completed and, if so, decodes its output into out (which may be nil).
func (d *DB) Step(ctx context.Context, name string, out any) (bool, error) {
	var data string
	err := d.queryRow(ctx, `SELECT data FROM steps WHERE name = ?`, name).Scan(&data)
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
	out, err := columnOf(d.query(ctx, `SELECT name FROM steps WHERE substr(name, 1, ?) = ? ORDER BY `+d.insertOrder(), len(prefix), prefix))
	if err != nil {
		return nil, fmt.Errorf("state: steps %s: %w", prefix, err)
	}
	return out, nil
}

// columnOf reads the one text column of a query's rows, closing them.
func columnOf(rows *sql.Rows, err error) ([]string, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// Tally is what a progress display counts: the pool's accepted items and its others, and the completed steps
// under each prefix asked for.
type Tally struct {
	Accepted, Other int
	Steps           []int
}

// Tally counts the pool by status and the completed steps under each of stepPrefixes, in one query.
func (d *DB) Tally(ctx context.Context, stepPrefixes ...string) (Tally, error) {
	q, args, t, dest := tallyQuery(stepPrefixes)
	if err := d.queryRow(ctx, `SELECT `+q, args...).Scan(dest...); err != nil {
		return Tally{}, fmt.Errorf("state: tally: %w", err)
	}
	return *t, nil
}

// tallyQuery is Tally's select list, its arguments, and where each column scans to.
func tallyQuery(stepPrefixes []string) (string, []any, *Tally, []any) {
	q := `(SELECT COUNT(*) FROM evidence WHERE status = ?), (SELECT COUNT(*) FROM evidence WHERE status <> ?)`
	args := []any{Accepted, Accepted}
	for _, p := range stepPrefixes {
		q += `, (SELECT COUNT(*) FROM steps WHERE substr(name, 1, ?) = ?)`
		args = append(args, len(p), p)
	}
	t := &Tally{Steps: make([]int, len(stepPrefixes))}
	dest := []any{&t.Accepted, &t.Other}
	for i := range t.Steps {
		dest = append(dest, &t.Steps[i])
	}
	return q, args, t, dest
}

// Glance is what a step of a run shared between processes reads, when it starts, of what the other steps change.
type Glance struct {
	// Others is the spend of every attempt but the caller's.
	Others Spend
	// Meta holds the meta keys asked for that are set.
	Meta map[string]string
	// Tally counts the pool and the completed steps under the prefixes asked for.
	Tally Tally
}

// Glance reads, in one query, the spend of every attempt but except, the meta values of metaKeys and the Tally
// of stepPrefixes.
func (d *DB) Glance(ctx context.Context, except string, metaKeys []string, stepPrefixes ...string) (Glance, error) {
	q := `SELECT s.tokens, s.cost_usd, s.calls, s.estimated`
	var args []any
	var g Glance
	dest := []any{&g.Others.Tokens, &g.Others.CostUSD, &g.Others.Calls, &g.Others.Estimated}
	vals := make([]sql.NullString, len(metaKeys))
	for i, k := range metaKeys {
		q += `, (SELECT value FROM meta WHERE key = ?)`
		args = append(args, k)
		dest = append(dest, &vals[i])
	}
	tq, targs, t, tdest := tallyQuery(stepPrefixes)
	sums, sargs := spendSums([]string{except})
	// Placeholders bind in the order of the text: the select list's, then the FROM clause's.
	q += `, ` + tq + ` FROM ` + sums + ` s`
	args = append(append(args, targs...), sargs...)
	dest = append(dest, tdest...)
	if err := d.queryRow(ctx, q, args...).Scan(dest...); err != nil {
		return Glance{}, fmt.Errorf("state: glance: %w", err)
	}
	g.Meta = map[string]string{}
	for i, k := range metaKeys {
		if vals[i].Valid {
			g.Meta[k] = vals[i].String
		}
	}
	g.Tally = *t
	return g, nil
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
	var res AddedEvidence
	op, err := d.addEvidence(e, &res)
	if err != nil {
		return "", false, err
	}
	if err := d.write(ctx, op); err != nil {
		return "", false, fmt.Errorf("state: add evidence: %w", err)
	}
	return res.ID, res.Added, nil
}

// AddedEvidence is what writing one evidence item did: its id, and whether it was new to the pool.
type AddedEvidence struct {
	ID    string
	Added bool
}

// addEvidence checks e and returns the write that adds it, which sets *res.
func (d *DB) addEvidence(e Evidence, res *AddedEvidence) (func(context.Context, wtx) error, error) {
	if err := CheckEvidence(e); err != nil {
		return nil, err
	}
	key := EvidenceKey(e.Source, e.Quote)
	return func(ctx context.Context, t wtx) error {
		if d.d.name == Postgres {
			// Ids are dense per run: one writer at a time numbers them, whichever process it is.
			if _, err := t.tx.ExecContext(ctx, `LOCK TABLE evidence IN SHARE ROW EXCLUSIVE MODE`); err != nil {
				return err
			}
		}
		var id, sq string
		err := t.queryRow(ctx, `SELECT id, sub_question FROM evidence WHERE key = ?`, key).Scan(&id, &sq)
		if err == nil && strings.HasPrefix(sq, CarriedPrefix) && !strings.HasPrefix(e.SubQuestion, CarriedPrefix) {
			// An item carried from an earlier run that this run found again: it is this run's finding now, pooled
			// under the sub-question that found it.
			if _, err := t.exec(ctx, `UPDATE evidence SET sub_question = ?, claim = ?, round = ? WHERE id = ?`,
				e.SubQuestion, e.Claim, e.Round, id); err != nil {
				return err
			}
			*res = AddedEvidence{ID: id, Added: true}
			return nil
		}
		if err == nil {
			// The pool holds a quote once, for every sub-question: found again by a read that judged it more
			// relevant (a definition a facet's read found first, in passing), it keeps the higher relevance, so
			// the report ranks it by the best any read gave it.
			if _, err := t.exec(ctx, `UPDATE evidence SET confidence = ? WHERE id = ? AND confidence < ?`,
				e.Confidence, id, e.Confidence); err != nil {
				return err
			}
			*res = AddedEvidence{ID: id}
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		var seq int64
		if err := t.queryRow(ctx, `SELECT COALESCE(MAX(seq), 0) + 1 FROM evidence`).Scan(&seq); err != nil {
			return err
		}
		id = fmt.Sprintf("e%d", seq)
		if _, err := t.exec(ctx, `INSERT INTO evidence(seq, id, key, sub_question, claim, quote, source, title,
		confidence, round, status, reason, created) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			seq, id, key, e.SubQuestion, e.Claim, e.Quote, e.Source, e.Title, e.Confidence, e.Round, e.Status,
			e.Reason, now()); err != nil {
			return err
		}
		*res = AddedEvidence{ID: id, Added: true}
		return nil
	}, nil
}

// SetEvidenceStatus changes an item's status (the verifier's rejections).
func (d *DB) SetEvidenceStatus(ctx context.Context, id, status, reason string) error {
	if status != Accepted && status != Rejected {
		return fmt.Errorf("state: evidence %s: status %q is not accepted or rejected", id, status)
	}
	err := d.write(ctx, func(ctx context.Context, t wtx) error {
		res, err := t.exec(ctx, `UPDATE evidence SET status = ?, reason = ? WHERE id = ?`, status, reason, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("state: evidence %s: %w", id, err)
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
	rows, err := d.query(ctx, q+` ORDER BY seq`, args...)
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
	var refused error
	err := d.write(ctx, func(ctx context.Context, t wtx) error {
		if _, err := t.exec(ctx, `DELETE FROM citations`); err != nil {
			return err
		}
		for _, c := range cs {
			var status string
			err := t.queryRow(ctx, `SELECT status FROM evidence WHERE id = ?`, c.EvidenceID).Scan(&status)
			if errors.Is(err, sql.ErrNoRows) {
				refused = fmt.Errorf("state: citation %s refused: evidence %s does not exist", c.ConclusionID, c.EvidenceID)
				return refused
			}
			if err != nil {
				return err
			}
			if status != Accepted {
				refused = fmt.Errorf("state: citation %s refused: evidence %s is %s", c.ConclusionID, c.EvidenceID, status)
				return refused
			}
			if err := CheckSource(c.Source); err != nil {
				refused = fmt.Errorf("state: citation %s refused: %v", c.ConclusionID, err)
				return refused
			}
			if c.N < 1 {
				refused = fmt.Errorf("state: citation %s refused: number %d < 1", c.ConclusionID, c.N)
				return refused
			}
			if _, err := t.exec(ctx, `INSERT INTO citations(conclusion_id, text, evidence_id, source, n)
			VALUES(?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`, c.ConclusionID, c.Text, c.EvidenceID, c.Source, c.N); err != nil {
				return err
			}
		}
		return nil
	})
	if refused != nil {
		return refused
	}
	if err != nil {
		return fmt.Errorf("state: citations: %w", err)
	}
	return nil
}

// Citations returns the citation map in conclusion order.
func (d *DB) Citations(ctx context.Context) ([]Citation, error) {
	rows, err := d.query(ctx, `SELECT conclusion_id, text, evidence_id, source, n FROM citations
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
	op, err := addLog(e)
	if err != nil {
		return err
	}
	if err := d.write(ctx, op); err != nil {
		return fmt.Errorf("state: log: %w", err)
	}
	return nil
}

func addLog(e LogEntry) (func(context.Context, wtx) error, error) {
	if err := CheckStage(e.Stage); err != nil {
		return nil, fmt.Errorf("state: log entry refused: %v", err)
	}
	if strings.TrimSpace(e.Decision) == "" {
		return nil, errors.New("state: log entry refused: decision is empty")
	}
	if e.Retries < 0 || e.Tokens < 0 || e.CostUSD < 0 || math.IsNaN(e.CostUSD) {
		return nil, fmt.Errorf("state: log entry refused: negative retries, tokens or cost (%d, %d, %v)", e.Retries, e.Tokens, e.CostUSD)
	}
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	gaps, _ := json.Marshal(append([]string{}, e.Gaps...))
	return func(ctx context.Context, t wtx) error {
		_, err := t.exec(ctx, `INSERT INTO log(time, stage, round, sub_question, decision, detail, gaps,
		retries, duration_ms, tokens, cost_usd, error) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			e.Time.UTC().Format(time.RFC3339Nano), e.Stage, e.Round, e.SubQuestion, e.Decision, e.Detail, string(gaps),
			e.Retries, e.Duration.Milliseconds(), e.Tokens, e.CostUSD, e.Error)
		return err
	}, nil
}

// ---- batches ----

// A Batch is writes that commit together, in the order they were queued, in one transaction: a caller with
// several rows to write at once waits for one commit instead of one per row. Each write is checked when it is
// queued (a refused one is not queued); Commit writes all of them or, when one fails, none. A Batch is used by
// one goroutine.
type Batch struct {
	d   *DB
	ops []func(context.Context, wtx) error
}

// Batch returns an empty batch of writes to d.
func (d *DB) Batch() *Batch { return &Batch{d: d} }

// Len is the number of writes queued.
func (b *Batch) Len() int { return len(b.ops) }

// AddEvidence queues the write of AddEvidence; once Commit has returned nil, *res holds its id and whether it
// was new to the pool.
func (b *Batch) AddEvidence(e Evidence, res *AddedEvidence) error {
	op, err := b.d.addEvidence(e, res)
	if err == nil {
		b.ops = append(b.ops, op)
	}
	return err
}

// MarkStep queues the write of MarkStep.
func (b *Batch) MarkStep(name string, data any) error {
	op, err := markStep(name, data)
	if err == nil {
		b.ops = append(b.ops, op)
	}
	return err
}

// SetMeta queues the write of SetMeta.
func (b *Batch) SetMeta(key, value string) {
	b.ops = append(b.ops, setMeta(key, value))
}

// AddLog queues the write of AddLog.
func (b *Batch) AddLog(e LogEntry) error {
	op, err := addLog(e)
	if err == nil {
		b.ops = append(b.ops, op)
	}
	return err
}

// Later queues fn, called when the batch is written, once the writes queued before it have run (so the results
// they set can be read): the writes fn queues to the batch it is given join the same transaction, in order. An
// error from fn or from those writes fails the batch.
func (b *Batch) Later(fn func(*Batch) error) {
	b.ops = append(b.ops, func(ctx context.Context, t wtx) error {
		more := b.d.Batch()
		if err := fn(more); err != nil {
			return err
		}
		for _, op := range more.ops {
			if err := op(ctx, t); err != nil {
				return err
			}
		}
		return nil
	})
}

// Commit writes the queued writes and empties the batch.
func (b *Batch) Commit(ctx context.Context) error {
	ops := b.ops
	b.ops = nil
	if len(ops) == 0 {
		return nil
	}
	err := b.d.write(ctx, func(ctx context.Context, t wtx) error {
		// Its own savepoint: the group commit rolls a failed write back only when it shares the transaction.
		if _, err := t.tx.ExecContext(ctx, "SAVEPOINT batch"); err != nil {
			return err
		}
		for _, op := range ops {
			if err := op(ctx, t); err != nil {
				_, _ = t.tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT batch")
				_, _ = t.tx.ExecContext(ctx, "RELEASE SAVEPOINT batch")
				return err
			}
		}
		_, err := t.tx.ExecContext(ctx, "RELEASE SAVEPOINT batch")
		return err
	})
	if err != nil {
		return fmt.Errorf("state: batch of %d writes: %w", len(ops), err)
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
	rows, err := d.query(ctx, q+` ORDER BY seq`, args...)
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
	if err := d.write(ctx, func(ctx context.Context, t wtx) error {
		_, err := t.exec(ctx, `INSERT INTO documents(norm_url, url, final_url, title, hash, path,
		content_type, truncated, fetched_at) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(norm_url) DO NOTHING`,
			sources.NormalizeURL(doc.URL), doc.URL, doc.FinalURL, doc.Title, doc.Hash, doc.Path, doc.ContentType,
			doc.Truncated, doc.FetchedAt.UTC().Format(time.RFC3339Nano))
		return err
	}); err != nil {
		return fmt.Errorf("state: document %s: %w", doc.URL, err)
	}
	return nil
}

// Document looks a fetched document up by URL (any form that normalises the same).
func (d *DB) Document(ctx context.Context, rawURL string) (*Document, error) {
	var doc Document
	var t string
	err := d.queryRow(ctx, `SELECT url, final_url, title, hash, path, content_type, truncated, fetched_at
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
	rows, err := d.query(ctx, `SELECT url, final_url, title, hash, path, content_type, truncated, fetched_at
		FROM documents ORDER BY `+d.insertOrder())
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

// insertOrder is the column that orders rows of steps and documents as they were inserted.
func (d *DB) insertOrder() string {
	if d.d.name == Postgres {
		return "seq"
	}
	return "rowid"
}

// ---- document texts ----

// PutText stores a fetched document's text under its hash (first write wins), so the text is readable wherever
// the state is — on another worker's machine too.
func (d *DB) PutText(ctx context.Context, hash, text string) error {
	if hash == "" {
		return errors.New("state: text refused: no hash")
	}
	if err := d.write(ctx, func(ctx context.Context, t wtx) error {
		_, err := t.exec(ctx, `INSERT INTO texts(hash, text) VALUES(?, ?) ON CONFLICT(hash) DO NOTHING`, hash, text)
		return err
	}); err != nil {
		return fmt.Errorf("state: text %s: %w", hash, err)
	}
	return nil
}

// Text returns the text stored under hash, or ErrNotFound (wrapped).
func (d *DB) Text(ctx context.Context, hash string) (string, error) {
	var text string
	err := d.queryRow(ctx, `SELECT text FROM texts WHERE hash = ?`, hash).Scan(&text)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("state: text %s: %w", hash, ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("state: text %s: %w", hash, err)
	}
	return text, nil
}

// ---- the spend ledger ----

// Spend is what a run (or one attempt of one of its steps) consumed.
type Spend struct {
	Tokens  int
	CostUSD float64
	Calls   int
	// Estimated is the part of Tokens counted with a tokenizer because the server reported no usage.
	Estimated int
}

// SetSpend records what the attempt named key has spent so far (its running total, replacing the previous value
// for key). Every process working on a run writes its own keys; TotalSpend adds them up.
func (d *DB) SetSpend(ctx context.Context, key string, s Spend) error {
	if key == "" {
		return errors.New("state: spend refused: no key")
	}
	if s.Tokens < 0 || s.Calls < 0 || s.CostUSD < 0 || math.IsNaN(s.CostUSD) || s.Estimated < 0 || s.Estimated > s.Tokens {
		return fmt.Errorf("state: spend refused: negative tokens, calls or cost, or more tokens estimated than spent (%d, %d, %v, %d)",
			s.Tokens, s.Calls, s.CostUSD, s.Estimated)
	}
	greatest := "MAX"
	if d.d.name == Postgres {
		greatest = "GREATEST"
	}
	if err := d.write(ctx, func(ctx context.Context, t wtx) error {
		// An attempt's calls only grow; ReserveCall counts them up while the attempt runs.
		_, err := t.exec(ctx, `INSERT INTO spend(key, tokens, cost_usd, calls, estimated, updated) VALUES(?, ?, ?, ?, ?, ?)
		ON CONFLICT(key) DO UPDATE SET tokens = excluded.tokens, cost_usd = excluded.cost_usd,
		calls = `+greatest+`(spend.calls, excluded.calls), estimated = excluded.estimated, updated = excluded.updated`,
			key, s.Tokens, s.CostUSD, s.Calls, s.Estimated, now())
		return err
	}); err != nil {
		return fmt.Errorf("state: spend %s: %w", key, err)
	}
	return nil
}

// ReserveCall counts one more call for the attempt named key if the run's calls, all keys together, are below
// limit, and reports whether it did. Reservations are serialised per run across processes, so concurrent
// steps on many workers never pass the run's call cap together.
func (d *DB) ReserveCall(ctx context.Context, key string, limit int) (bool, error) {
	if key == "" {
		return false, errors.New("state: call refused: no key")
	}
	ok := false
	err := d.write(ctx, func(ctx context.Context, t wtx) error {
		ok = false
		if d.d.name == Postgres {
			if _, err := t.tx.ExecContext(ctx, `LOCK TABLE spend IN SHARE ROW EXCLUSIVE MODE`); err != nil {
				return err
			}
		}
		var total int
		if err := t.queryRow(ctx, `SELECT COALESCE(SUM(calls), 0) FROM spend`).Scan(&total); err != nil {
			return err
		}
		if total >= limit {
			return nil
		}
		if _, err := t.exec(ctx, `INSERT INTO spend(key, calls, updated) VALUES(?, 1, ?)
		ON CONFLICT(key) DO UPDATE SET calls = spend.calls + 1, updated = excluded.updated`, key, now()); err != nil {
			return err
		}
		ok = true
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("state: reserve a call: %w", err)
	}
	return ok, nil
}

// TotalSpend adds up the spend of every key except those listed in except (the caller's own, which it counts
// live).
func (d *DB) TotalSpend(ctx context.Context, except ...string) (Spend, error) {
	q, args := spendSums(except)
	var total Spend
	if err := d.queryRow(ctx, `SELECT s.tokens, s.cost_usd, s.calls, s.estimated FROM `+q+` s`, args...).Scan(
		&total.Tokens, &total.CostUSD, &total.Calls, &total.Estimated); err != nil {
		return Spend{}, fmt.Errorf("state: spend: %w", err)
	}
	return total, nil
}

// spendSums is a subquery of one row, the spend of every key but those of except: tokens, cost_usd, calls and
// estimated.
func spendSums(except []string) (string, []any) {
	q := `(SELECT COALESCE(SUM(tokens), 0) AS tokens, COALESCE(SUM(cost_usd), 0) AS cost_usd, COALESCE(SUM(calls), 0) AS calls,
	COALESCE(SUM(estimated), 0) AS estimated FROM spend WHERE 1 = 1`
	args := make([]any, 0, len(except))
	for _, k := range except {
		q += ` AND key <> ?`
		args = append(args, k)
	}
	return q + `)`, args
}

// SpendKeys lists the keys of the spend ledger (one per step attempt of a durable run).
func (d *DB) SpendKeys(ctx context.Context) ([]string, error) {
	out, err := columnOf(d.query(ctx, `SELECT key FROM spend ORDER BY key`))
	if err != nil {
		return nil, fmt.Errorf("state: spend: %w", err)
	}
	return out, nil
}

// ---- events ----

// StoredEvent is one event of a run as stored: its place in the run's sequence and its JSON.
type StoredEvent struct {
	Seq  int64
	Data string
}

// maxEventBytes bounds one stored event.
const maxEventBytes = 1 << 20

// AddEvents appends events (JSON documents) to the run's sequence, in order.
func (d *DB) AddEvents(ctx context.Context, data ...[]byte) error {
	for _, b := range data {
		if len(b) > maxEventBytes || !json.Valid(b) {
			return fmt.Errorf("state: event refused: not a JSON document of at most %d bytes", maxEventBytes)
		}
	}
	if err := d.write(ctx, func(ctx context.Context, t wtx) error {
		for _, b := range data {
			if _, err := t.exec(ctx, `INSERT INTO events(data) VALUES(?)`, string(b)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("state: events: %w", err)
	}
	return nil
}

// Events returns up to limit events after seq after (limit ≤ 0: all), oldest first.
func (d *DB) Events(ctx context.Context, after int64, limit int) ([]StoredEvent, error) {
	q := `SELECT seq, data FROM events WHERE seq > ? ORDER BY seq`
	args := []any{after}
	if limit > 0 {
		q += ` LIMIT ?`
		args = append(args, limit)
	}
	rows, err := d.query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("state: events: %w", err)
	}
	defer rows.Close()
	var out []StoredEvent
	for rows.Next() {
		var e StoredEvent
		if err := rows.Scan(&e.Seq, &e.Data); err != nil {
			return nil, fmt.Errorf("state: events: %w", err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}
