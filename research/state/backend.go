package state

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
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

var sqliteDialect = dialect{name: SQLite, migrations: []string{sqliteV1, sqliteV2, sqliteV3}}

var postgresDialect = dialect{name: Postgres, migrations: []string{postgresV1, postgresV2, postgresV3}}

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

// registryDDL is the one table PostgreSQL keeps outside the run schemas: which runs exist, so any machine can
// list them.
const registryDDL = `
CREATE TABLE IF NOT EXISTS public.deepresearch_runs (
	run_id  TEXT PRIMARY KEY,
	schema  TEXT NOT NULL UNIQUE,
	created TEXT NOT NULL
);
`

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
func RunSchema(runID string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(runID) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
		if b.Len() >= 40 {
			break
		}
	}
	return "run_" + b.String() + "_" + RunSchemaSuffix(runID)
}

// openPostgres opens a pool whose connections see the run's schema first on their search path, creating and
// migrating the schema when write is set.
func openPostgres(ctx context.Context, url, runID string, write bool) (*sql.DB, error) {
	if strings.TrimSpace(runID) == "" {
		return nil, errors.New("a PostgreSQL state needs a run id")
	}
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parse URL: %w", err)
	}
	schema := RunSchema(runID)
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
	if err := ensureRegistry(ctx, db); err != nil {
		db.Close()
		return nil, err
	}
	// One advisory lock per schema serialises concurrent openers (several workers starting on one run).
	lock := fmt.Sprintf(`SELECT pg_advisory_xact_lock(%d); CREATE SCHEMA IF NOT EXISTS %s`, lockID(schema), pgx.Identifier{schema}.Sanitize())
	if err := migrate(ctx, db, postgresDialect, lock); err != nil {
		db.Close()
		return nil, fmt.Errorf("migrate schema %s: %w", schema, err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO public.deepresearch_runs(run_id, schema, created) VALUES($1, $2, $3)
		ON CONFLICT (run_id) DO NOTHING`, runID, schema, now()); err != nil {
		db.Close()
		return nil, fmt.Errorf("register run: %w", err)
	}
	return db, nil
}

func ensureRegistry(ctx context.Context, db *sql.DB) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("registry: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`SELECT pg_advisory_xact_lock(%d)`, lockID("deepresearch_runs"))); err != nil {
		return fmt.Errorf("registry: %w", err)
	}
	if _, err := tx.ExecContext(ctx, registryDDL); err != nil {
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
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("state: parse URL: %w", err)
	}
	db := stdlib.OpenDB(*cfg)
	defer db.Close()
	if err := ensureRegistry(ctx, db); err != nil {
		return nil, fmt.Errorf("state: list runs: %w", err)
	}
	rows, err := db.QueryContext(ctx, `SELECT run_id FROM public.deepresearch_runs ORDER BY created, run_id`)
	if err != nil {
		return nil, fmt.Errorf("state: list runs: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("state: list runs: %w", err)
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// RunSchemaSuffix is the short hash RunSchema ends with: a stable, distinct suffix for any id.
func RunSchemaSuffix(id string) string {
	h := sha256.Sum256([]byte(id))
	return hex.EncodeToString(h[:4])
}
