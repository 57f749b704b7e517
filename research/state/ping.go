package state

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/jackc/pgx/v5/stdlib"
)

// Pinger checks that a PostgreSQL state answers, over one small pool kept open between checks (a worker's
// readiness probe).
type Pinger struct{ db *sql.DB }

// NewPinger prepares pings of the PostgreSQL state at url; it connects on the first Ping.
func NewPinger(url string) (*Pinger, error) {
	t, err := parsePostgres(url)
	if err != nil {
		return nil, fmt.Errorf("state: %w", err)
	}
	db := stdlib.OpenDB(*t.cfg)
	db.SetMaxOpenConns(1)
	return &Pinger{db: db}, nil
}

// Ping returns nil when the server answers a query.
func (p *Pinger) Ping(ctx context.Context) error {
	var one int
	if err := p.db.QueryRowContext(ctx, `SELECT 1`).Scan(&one); err != nil {
		return fmt.Errorf("state: ping: %w", err)
	}
	return nil
}

// Close closes the pool.
func (p *Pinger) Close() error { return p.db.Close() }
