package chat

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"time"

	"github.com/deepresearch/deepresearch/base/atomicfile"
	"github.com/deepresearch/deepresearch/llm"
)

// Session is a persisted conversation: enough to resume it in a later process.
type Session struct {
	ID        string    `json:"id"`
	Title     string    `json:"title,omitempty"` // the first thing the user asked
	Created   time.Time `json:"created"`
	Updated   time.Time `json:"updated"`
	Workspace string    `json:"workspace,omitempty"`
	Model     string    `json:"model,omitempty"`
	// Messages is the agent's history, system prompt included.
	Messages []llm.Message `json:"messages"`
	// Spend of earlier processes of this session; the current process's spend is in the ledger.
	Usage   llm.Usage `json:"usage"`
	CostUSD float64   `json:"cost_usd"`
	Calls   int       `json:"calls"`
	// Reports lists the report.md files /deep-research wrote in this session.
	Reports []string `json:"reports,omitempty"`
}

// Store keeps sessions as JSON files in one folder.
type Store struct{ Dir string }

var sessionIDRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

func (s Store) path(id string) (string, error) {
	if !sessionIDRE.MatchString(id) {
		return "", fmt.Errorf("bad session id %q", id)
	}
	return filepath.Join(s.Dir, id+".json"), nil
}

// Save writes the session atomically, so a crash mid-write never loses the previous state.
func (s Store) Save(sess *Session) error {
	p, err := s.path(sess.ID)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return fmt.Errorf("save session %s: %w", sess.ID, err)
	}
	data, err := json.MarshalIndent(sess, "", "  ")
	if err != nil {
		return fmt.Errorf("save session %s: %w", sess.ID, err)
	}
	if err := atomicfile.Write(p, data, 0o644); err != nil {
		return fmt.Errorf("save session %s: %w", sess.ID, err)
	}
	return nil
}

// ErrNoSession is returned (wrapped) by Load for an unknown id.
var ErrNoSession = errors.New("no such session")

// Load reads a session.
func (s Store) Load(id string) (*Session, error) {
	p, err := s.path(id)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("session %s: %w in %s", id, ErrNoSession, s.Dir)
	}
	if err != nil {
		return nil, fmt.Errorf("load session %s: %w", id, err)
	}
	var sess Session
	if err := json.Unmarshal(data, &sess); err != nil {
		return nil, fmt.Errorf("load session %s: %s is not a valid session file: %w", id, p, err)
	}
	if sess.ID != id {
		return nil, fmt.Errorf("load session %s: file holds session %q", id, sess.ID)
	}
	return &sess, nil
}

// List returns the stored sessions, most recently updated first.
func (s Store) List() ([]*Session, error) {
	ents, err := os.ReadDir(s.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	var out []*Session
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() || filepath.Ext(name) != ".json" {
			continue
		}
		sess, err := s.Load(name[:len(name)-len(".json")])
		if err != nil {
			continue
		}
		out = append(out, sess)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Updated.After(out[j].Updated) })
	return out, nil
}

func newSessionID(now time.Time) string {
	return now.Format("20060102-150405") + "-" + randHex(3)
}
