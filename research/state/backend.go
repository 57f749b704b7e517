package state

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// The two backends. SQLite (the default) keeps one run in one file of the run folder; PostgreSQL keeps every run
// of a deployment in one database, one schema per run, so that workers on many machines and the read-side
// commands (runs, show, serve, mcp) share them.
const (
	SQLite   = "sqlite"
	Postgres = "postgres"
)

// IsPostgresURL reports whether location names a PostgreSQL database (postgres:// or postgresql://) rather than a
// SQLite file.
func IsPostgresURL(location string) bool {
	l := strings.ToLower(strings.TrimSpace(location))
	return strings.HasPrefix(l, "postgres://") || strings.HasPrefix(l, "postgresql://")
}

// dialect is what differs between the backends: placeholders and the schema's DDL.
type dialect struct {
	name       string
	migrations []string // migration i brings the schema to version i+1
}

// rebind turns the ? placeholders of a query into PostgreSQL's $1, $2, …; queries here never hold a literal ?.
func (d dialect) rebind(q string) string {
	if d.name != Postgres {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

var sqliteDialect = dialect{name: SQLite, migrations: []string{sqliteV1, sqliteV2, sqliteV3, spendV4}}

var postgresDialect = dialect{name: Postgres, migrations: []string{postgresV1, postgresV2, postgresV3, spendV4}}

// Version 1: the tables of a run (kept as they were before migrations were versioned, so older run folders
// migrate in place).
const sqliteV1 = `
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

// Version 2: document texts (so a run's sources are readable wherever the state is) and the spend ledger (one
// row per worker attempt, so the fuses read the whole run's spend whichever process spent it).
const sqliteV2 = `
CREATE TABLE IF NOT EXISTS texts (
	hash TEXT PRIMARY KEY,
	text TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS spend (
	key      TEXT PRIMARY KEY,
	tokens   INTEGER NOT NULL DEFAULT 0 CHECK (tokens >= 0),
	cost_usd REAL NOT NULL DEFAULT 0 CHECK (cost_usd >= 0),
	calls    INTEGER NOT NULL DEFAULT 0 CHECK (calls >= 0),
	updated  TEXT NOT NULL
);
`

const postgresV1 = `
CREATE TABLE meta (
	key   TEXT PRIMARY KEY,
	value TEXT NOT NULL
);
CREATE TABLE evidence (
	seq          BIGINT PRIMARY KEY,
	id           TEXT NOT NULL UNIQUE,
	key          TEXT NOT NULL UNIQUE,
	sub_question TEXT NOT NULL,
	claim        TEXT NOT NULL,
	quote        TEXT NOT NULL,
	source       TEXT NOT NULL,
	title        TEXT NOT NULL DEFAULT '',
	confidence   DOUBLE PRECISION NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
	round        INTEGER NOT NULL CHECK (round >= 1),
	status       TEXT NOT NULL CHECK (status IN ('accepted', 'rejected')),
	reason       TEXT NOT NULL DEFAULT '',
	created      TEXT NOT NULL
);
CREATE TABLE citations (
	conclusion_id TEXT NOT NULL,
	text          TEXT NOT NULL,
	evidence_id   TEXT NOT NULL REFERENCES evidence(id),
	source        TEXT NOT NULL,
	n             INTEGER NOT NULL,
	PRIMARY KEY (conclusion_id, evidence_id)
);
CREATE TABLE log (
	seq          BIGSERIAL PRIMARY KEY,
	time         TEXT NOT NULL,
	stage        TEXT NOT NULL CHECK (stage IN ('scope', 'search', 'read', 'verify', 'synth')),
	round        INTEGER NOT NULL DEFAULT 0,
	sub_question TEXT NOT NULL DEFAULT '',
	decision     TEXT NOT NULL,
	detail       TEXT NOT NULL DEFAULT '',
	gaps         TEXT NOT NULL DEFAULT '[]',
	retries      INTEGER NOT NULL DEFAULT 0,
	duration_ms  BIGINT NOT NULL DEFAULT 0,
	tokens       BIGINT NOT NULL DEFAULT 0,
	cost_usd     DOUBLE PRECISION NOT NULL DEFAULT 0,
	error        TEXT NOT NULL DEFAULT ''
);
CREATE TABLE steps (
	seq     BIGSERIAL,
	name    TEXT PRIMARY KEY,
	data    TEXT NOT NULL DEFAULT '',
	done_at TEXT NOT NULL
);
CREATE TABLE documents (
	seq          BIGSERIAL,
	norm_url     TEXT PRIMARY KEY,
	url          TEXT NOT NULL,
	final_url    TEXT NOT NULL DEFAULT '',
	title        TEXT NOT NULL DEFAULT '',
	hash         TEXT NOT NULL,
	path         TEXT NOT NULL,
	content_type TEXT NOT NULL DEFAULT '',
	truncated    BOOLEAN NOT NULL DEFAULT FALSE,
	fetched_at   TEXT NOT NULL
);
`

const postgresV2 = `
CREATE TABLE texts (
	hash TEXT PRIMARY KEY,
	text TEXT NOT NULL
);
CREATE TABLE spend (
	key      TEXT PRIMARY KEY,
	tokens   BIGINT NOT NULL DEFAULT 0 CHECK (tokens >= 0),
	cost_usd DOUBLE PRECISION NOT NULL DEFAULT 0 CHECK (cost_usd >= 0),
	calls    BIGINT NOT NULL DEFAULT 0 CHECK (calls >= 0),
	updated  TEXT NOT NULL
);
`

// Version 3: a run's events (its progress), so that whoever follows a run sees what every process working on it
// did.
const sqliteV3 = `
CREATE TABLE IF NOT EXISTS events (
	seq  INTEGER PRIMARY KEY AUTOINCREMENT,
	data TEXT NOT NULL
);
`

const postgresV3 = `
CREATE TABLE events (
	seq  BIGSERIAL PRIMARY KEY,
	data TEXT NOT NULL
);
`

// Version 4: the part of an attempt's tokens counted with a tokenizer (its server reported no usage), so that a
// durable run's footer says its figure was estimated as a local run's does. The same statement on both backends.
const spendV4 = `
ALTER TABLE spend ADD COLUMN estimated BIGINT NOT NULL DEFAULT 0 CHECK (estimated >= 0);
`

// registryDDL is the one table PostgreSQL keeps outside the run schemas: which runs exist, so any machine can
// list them. A namespace has a registry table of its own (see pgTarget).
func registryDDL(table string) string {
	return `CREATE TABLE IF NOT EXISTS ` + table + ` (
	run_id  TEXT PRIMARY KEY,
	schema  TEXT NOT NULL UNIQUE,
	created TEXT NOT NULL
);`
}

// NamespaceParam is the query parameter of a PostgreSQL state URL that names the deployment's namespace
// (postgres://…/research?namespace=staging): two deployments sharing one database, each with its own namespace,
// each see only their own runs — their own registry of runs and their own run schemas. It is read here and never
// sent to the server. No namespace is the default deployment (the registry public.deepresearch_runs).
const NamespaceParam = "namespace"

// maxNamespace bounds a namespace's length, so that run schema names stay within PostgreSQL's 63 bytes.
const maxNamespace = 16

// pgTarget is where a PostgreSQL state URL points: its connection settings (without the namespace), its
// namespace, and the namespace's registry table.
type pgTarget struct {
	cfg       *pgx.ConnConfig
	namespace string
	registry  string
}

func parsePostgres(url string) (pgTarget, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return pgTarget{}, fmt.Errorf("parse URL: %w", err)
	}
	t := pgTarget{cfg: cfg, registry: "public.deepresearch_runs"}
	if ns, ok := cfg.RuntimeParams[NamespaceParam]; ok {
		delete(cfg.RuntimeParams, NamespaceParam)
		if err := CheckNamespace(ns); err != nil {
			return pgTarget{}, err
		}
		t.namespace = ns
		if ns != "" {
			t.registry = "public.deepresearch_" + ns + "_runs"
		}
	}
	return t, nil
}

// CheckNamespace refuses a namespace that is not 1 to 16 lower-case letters, digits and underscores.
func CheckNamespace(ns string) error {
	if ns == "" {
		return nil
	}
	if len(ns) > maxNamespace {
		return fmt.Errorf("state: namespace %q: at most %d characters", ns, maxNamespace)
	}
	for _, r := range ns {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '_' {
			return fmt.Errorf("state: namespace %q: only a-z, 0-9 and _", ns)
		}
	}
	return nil
}

// schema is the run schema of a run in this target's namespace: RunSchema for the default namespace; in a
// named one, the namespace is part of the name and of the hash, so no id of one deployment reaches another's.
func (t pgTarget) schema(runID string) string {
	if t.namespace == "" {
		return RunSchema(runID)
	}
	return runSchemaIn(t.namespace+"_", t.namespace+"\x00"+runID, runID)
}

// SchemaVersion is the schema version Open migrates a database to.
func SchemaVersion() int { return len(sqliteDialect.migrations) }

// migrate brings the schema to the newest version inside one transaction; lock, when set, runs first in it (a
// lock that keeps two processes from migrating the same schema at once).
func migrate(ctx context.Context, db *sql.DB, d dialect, lock string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if lock != "" {
		if _, err := tx.ExecContext(ctx, lock); err != nil {
			return fmt.Errorf("lock: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY, applied TEXT NOT NULL)`); err != nil {
		return err
	}
	var have int
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&have); err != nil {
		return err
	}
	if have > len(d.migrations) {
		return fmt.Errorf("schema version %d is newer than this program knows (%d)", have, len(d.migrations))
	}
	for v := have + 1; v <= len(d.migrations); v++ {
		if _, err := tx.ExecContext(ctx, d.migrations[v-1]); err != nil {
			return fmt.Errorf("migration %d: %w", v, err)
		}
		if _, err := tx.ExecContext(ctx, d.rebind(`INSERT INTO schema_migrations(version, applied) VALUES(?, ?)`), v, now()); err != nil {
			return fmt.Errorf("migration %d: %w", v, err)
		}
	}
	return tx.Commit()
}

// RunSchema is the PostgreSQL schema that holds a run's tables: a readable prefix of the run id and a hash of it,
// so any id maps to a valid, distinct identifier.
func RunSchema(runID string) string { return runSchemaIn("", runID, runID) }

// runSchemaIn is run_<prefix><readable id>_<hash of key>, at most 63 bytes.
func runSchemaIn(prefix, key, runID string) string {
	room := min(40, 63-len("run_")-len(prefix)-1-8)
	var b strings.Builder
	for _, r := range strings.ToLower(runID) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
		if b.Len() >= room {
			break
		}
	}
	return "run_" + prefix + b.String() + "_" + RunSchemaSuffix(key)
}

// openPostgres opens a pool whose connections see the run's schema first on their search path, creating and
// migrating the schema when write is set.
func openPostgres(ctx context.Context, url, runID string, write bool) (*sql.DB, error) {
	if strings.TrimSpace(runID) == "" {
		return nil, errors.New("a PostgreSQL state needs a run id")
	}
	t, err := parsePostgres(url)
	if err != nil {
		return nil, err
	}
	cfg := t.cfg
	schema := t.schema(runID)
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	cfg.RuntimeParams["search_path"] = schema
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(4)
	db.SetMaxIdleConns(2)
	db.SetConnMaxIdleTime(time.Minute)
	if !write {
		var ok bool
		if err := db.QueryRowContext(ctx, `SELECT EXISTS(SELECT 1 FROM information_schema.schemata WHERE schema_name = $1)`, schema).Scan(&ok); err != nil {
			db.Close()
			return nil, err
		}
		if !ok {
			db.Close()
			return nil, fmt.Errorf("run %s: %w", runID, ErrNotFound)
		}
		return db, nil
	}
	if err := ensureRegistry(ctx, db, t.registry); err != nil {
		db.Close()
		return nil, err
	}
	// One advisory lock per schema serialises concurrent openers (several workers starting on one run).
	lock := fmt.Sprintf(`SELECT pg_advisory_xact_lock(%d); CREATE SCHEMA IF NOT EXISTS %s`, lockID(schema), pgx.Identifier{schema}.Sanitize())
	if err := migrate(ctx, db, postgresDialect, lock); err != nil {
		db.Close()
		return nil, fmt.Errorf("migrate schema %s: %w", schema, err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO `+t.registry+`(run_id, schema, created) VALUES($1, $2, $3)
		ON CONFLICT (run_id) DO NOTHING`, runID, schema, now()); err != nil {
		db.Close()
		return nil, fmt.Errorf("register run: %w", err)
	}
	return db, nil
}

func ensureRegistry(ctx context.Context, db *sql.DB, table string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("registry: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`SELECT pg_advisory_xact_lock(%d)`, lockID("deepresearch_runs"))); err != nil {
		return fmt.Errorf("registry: %w", err)
	}
	if _, err := tx.ExecContext(ctx, registryDDL(table)); err != nil {
		return fmt.Errorf("registry: %w", err)
	}
	return tx.Commit()
}

func lockID(name string) int64 {
	h := sha256.Sum256([]byte("deepresearch:" + name))
	var v int64
	for _, b := range h[:8] {
		v = v<<8 | int64(b)
	}
	return v
}

// ListRuns lists the run ids a PostgreSQL state holds, oldest first.
func ListRuns(ctx context.Context, url string) ([]string, error) {
	t, err := parsePostgres(url)
	if err != nil {
		return nil, fmt.Errorf("state: %w", err)
	}
	db := stdlib.OpenDB(*t.cfg)
	defer db.Close()
	if err := ensureRegistry(ctx, db, t.registry); err != nil {
		return nil, fmt.Errorf("state: list runs: %w", err)
	}
	out, err := columnOf(db.QueryContext(ctx, `SELECT run_id FROM `+t.registry+` ORDER BY created, run_id`))
	if err != nil {
		return nil, fmt.Errorf("state: list runs: %w", err)
	}
	return out, nil
}

// RunSchemaSuffix is the short hash RunSchema ends with: a stable, distinct suffix for any id.
func RunSchemaSuffix(id string) string {
	h := sha256.Sum256([]byte(id))
	return hex.EncodeToString(h[:4])
}

// ListedRun is one run of a PostgreSQL state as a listing shows it: the meta keys asked for and the number of
// accepted evidence rows, or Err when the run's schema cannot be read (missing, half-migrated, corrupt).
type ListedRun struct {
	ID       string
	Meta     map[string]string
	Accepted int
	Err      error
}

// listChunk bounds how many run schemas one listing query reads.
const listChunk = 200

// ListRunsWithMeta lists the runs a PostgreSQL state holds, oldest first, with the meta keys given and the count
// of accepted evidence of each, through one pool and a bounded number of queries (the registry, the catalogue,
// then one query per listChunk runs); a run whose schema cannot be read is listed with Err and the rest are
// listed as usual.
func ListRunsWithMeta(ctx context.Context, url string, keys []string) ([]ListedRun, error) {
	t, err := parsePostgres(url)
	if err != nil {
		return nil, fmt.Errorf("state: %w", err)
	}
	db := stdlib.OpenDB(*t.cfg)
	defer db.Close()
	db.SetMaxOpenConns(1)
	if err := ensureRegistry(ctx, db, t.registry); err != nil {
		return nil, fmt.Errorf("state: list runs: %w", err)
	}
	var runs []ListedRun
	var schemas []string
	rows, err := db.QueryContext(ctx, `SELECT run_id, schema FROM `+t.registry+` ORDER BY created, run_id`)
	if err != nil {
		return nil, fmt.Errorf("state: list runs: %w", err)
	}
	for rows.Next() {
		var id, schema string
		if err := rows.Scan(&id, &schema); err != nil {
			rows.Close()
			return nil, fmt.Errorf("state: list runs: %w", err)
		}
		runs = append(runs, ListedRun{ID: id})
		schemas = append(schemas, schema)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("state: list runs: %w", err)
	}
	if len(runs) == 0 {
		return nil, nil
	}
	have, err := listedColumns(ctx, db, schemas)
	if err != nil {
		return nil, err
	}
	var readable []int
	for i, s := range schemas {
		if runs[i].Err = checkListable(runs[i].ID, s, have[s]); runs[i].Err == nil {
			readable = append(readable, i)
		}
	}
	for len(readable) > 0 {
		n := min(listChunk, len(readable))
		chunk := readable[:n]
		readable = readable[n:]
		if err := listMeta(ctx, db, runs, schemas, chunk, keys); err != nil {
			if ctx.Err() != nil {
				return nil, fmt.Errorf("state: list runs: %w", ctx.Err())
			}
			// One schema the catalogue let through still fails (say, a column of the wrong type): read the
			// chunk run by run so that only that run is unreadable.
			for _, i := range chunk {
				if err := listMeta(ctx, db, runs, schemas, []int{i}, keys); err != nil {
					runs[i].Err = fmt.Errorf("run %s: schema %s: %w", runs[i].ID, schemas[i], err)
				}
			}
		}
	}
	return runs, nil
}

// listedColumns returns, per schema, the "table.column" names that a listing needs and the schema has (a schema
// that does not exist has no entry).
func listedColumns(ctx context.Context, db *sql.DB, schemas []string) (map[string]map[string]bool, error) {
	rows, err := db.QueryContext(ctx, `SELECT n.nspname, COALESCE(c.relname, ''), COALESCE(a.attname, '')
		FROM pg_namespace n
		LEFT JOIN pg_class c ON c.relnamespace = n.oid AND c.relkind IN ('r', 'p')
			AND c.relname IN ('meta', 'evidence', 'schema_migrations')
		LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
		WHERE n.nspname = ANY($1)`, schemas)
	if err != nil {
		return nil, fmt.Errorf("state: list runs: catalogue: %w", err)
	}
	defer rows.Close()
	out := map[string]map[string]bool{}
	for rows.Next() {
		var schema, table, column string
		if err := rows.Scan(&schema, &table, &column); err != nil {
			return nil, fmt.Errorf("state: list runs: catalogue: %w", err)
		}
		if out[schema] == nil {
			out[schema] = map[string]bool{}
		}
		if table != "" && column != "" {
			out[schema][table+"."+column] = true
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("state: list runs: catalogue: %w", err)
	}
	return out, nil
}

// checkListable says why a run's schema cannot be listed, or nil.
func checkListable(id, schema string, have map[string]bool) error {
	if have == nil {
		return fmt.Errorf("run %s: schema %s does not exist: %w", id, schema, ErrNotFound)
	}
	var missing []string
	for _, c := range []string{"schema_migrations.version", "meta.key", "meta.value", "evidence.status"} {
		if !have[c] {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("run %s: schema %s is incomplete (half-migrated or damaged): no %s", id, schema, strings.Join(missing, ", "))
	}
	return nil
}

// listMeta reads the meta keys, accepted evidence count and schema version of the runs at idx in one query.
func listMeta(ctx context.Context, db *sql.DB, runs []ListedRun, schemas []string, idx []int, keys []string) error {
	var q strings.Builder
	for n, i := range idx {
		if n > 0 {
			q.WriteString("\nUNION ALL\n")
		}
		s := pgx.Identifier{schemas[i]}.Sanitize()
		fmt.Fprintf(&q, `SELECT %d, (SELECT COALESCE(MAX(version), 0) FROM %s.schema_migrations),
			(SELECT COALESCE(json_object_agg(key, value), '{}')::text FROM %s.meta WHERE key = ANY($1)),
			(SELECT COUNT(*) FROM %s.evidence WHERE status = 'accepted')`, i, s, s, s)
	}
	rows, err := db.QueryContext(ctx, q.String(), keys)
	if err != nil {
		return err
	}
	defer rows.Close()
	type row struct {
		meta     map[string]string
		version  int
		accepted int
	}
	got := map[int]row{}
	for rows.Next() {
		var i, version, accepted int
		var meta string
		if err := rows.Scan(&i, &version, &meta, &accepted); err != nil {
			return err
		}
		r := row{version: version, accepted: accepted}
		if err := json.Unmarshal([]byte(meta), &r.meta); err != nil {
			return fmt.Errorf("meta: %w", err)
		}
		got[i] = r
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for _, i := range idx {
		r, ok := got[i]
		switch {
		case !ok:
			return fmt.Errorf("run %s: not read", runs[i].ID)
		case r.version > len(postgresDialect.migrations):
			runs[i].Err = fmt.Errorf("run %s: schema version %d is newer than this program knows (%d)", runs[i].ID, r.version, len(postgresDialect.migrations))
		case r.version < 1:
			runs[i].Err = fmt.Errorf("run %s: schema %s has no recorded migration (half-migrated or damaged)", runs[i].ID, schemas[i])
		default:
			runs[i].Meta, runs[i].Accepted = r.meta, r.accepted
		}
	}
	return nil
}
