package contextmgr

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

var safeNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// SafeName turns a tool-call or session id into a file name. Ids that are short and made of letters, digits,
// '.', '_' and '-' are used as they are; anything else (long ids, slashes, spaces, "..") is hashed, because
// eviction must never be skipped for an id that is not a valid file name (DeepAgents #5560).
func SafeName(id string) string {
	if safeNameRE.MatchString(id) && id != "." && !strings.Contains(id, "..") {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return "id-" + hex.EncodeToString(sum[:16])
}

// offload writes a tool result's full text to large_tool_results/<safe id> and returns its workspace path. When
// another result already holds that name (call ids repeat across sessions), a numbered suffix keeps both.
func (m *Manager) offload(id, content string) (string, error) {
	base := SafeName(id)
	for i := 1; ; i++ {
		name := base
		if i > 1 {
			name = fmt.Sprintf("%s-%d", base, i)
		}
		p := path.Join(LargeResultsDir, name)
		old, err := m.ws.ReadFile(p)
		if err == nil {
			if string(old) == content {
				return p, nil
			}
			if i > 1000 {
				return "", fmt.Errorf("offload %s: too many results with this id", id)
			}
			continue
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("offload %s: %w", id, err)
		}
		if err := m.ws.WriteFile(p, []byte(content)); err != nil {
			return "", fmt.Errorf("offload %s: %w", id, err)
		}
		m.enforceQuota(p)
		return p, nil
	}
}

// enforceQuota removes the oldest offloaded files once large_tool_results/ holds more than the quota, never the
// file just written, and logs each removal (DeepAgents #2055: that directory otherwise grows forever).
func (m *Manager) enforceQuota(keep string) {
	if m.cfg.OffloadQuota < 0 {
		return
	}
	dir, err := m.ws.Resolve(LargeResultsDir)
	if err != nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	type file struct {
		rel  string
		abs  string
		size int64
		mod  int64
	}
	var files []file
	var total int64
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		files = append(files, file{rel: m.ws.Rel(p), abs: p, size: fi.Size(), mod: fi.ModTime().UnixNano()})
		total += fi.Size()
		return nil
	})
	if total <= m.cfg.OffloadQuota {
		return
	}
	sort.Slice(files, func(i, j int) bool {
		if files[i].mod != files[j].mod {
			return files[i].mod < files[j].mod
		}
		return files[i].rel < files[j].rel
	})
	for _, f := range files {
		if total <= m.cfg.OffloadQuota {
			break
		}
		if f.rel == keep {
			continue
		}
		if err := os.Remove(f.abs); err != nil {
			m.log.Warn("contextmgr: could not remove offloaded file over quota", "path", f.rel, "err", err)
			continue
		}
		total -= f.size
		m.stats.QuotaRemovals++
		m.log.Info("contextmgr: offload quota exceeded; removed oldest offloaded tool result",
			"path", f.rel, "bytes", f.size, "quota_bytes", m.cfg.OffloadQuota, "remaining_bytes", total)
	}
}
