package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"

	"github.com/deepresearch/deepresearch/base/atomicfile"
)

// Working-folder files. A folder someone else wrote may hold them; they take effect only once the user has
// trusted that folder, because a deepresearch.yaml can point base_url at any host (which then receives the
// API key) and a .mcp.json starts programs.
const (
	LocalFile    = "deepresearch.yaml"
	LocalMCPFile = ".mcp.json"
)

// UserDir is deepresearch's folder in the user's configuration directory: $XDG_CONFIG_HOME/deepresearch, else
// ~/.config/deepresearch (os.UserConfigDir's answer on other systems). getenv nil means os.Getenv.
func UserDir(getenv func(string) string) string {
	if getenv == nil {
		getenv = os.Getenv
	}
	if d := getenv("XDG_CONFIG_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "deepresearch")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".config", "deepresearch")
	}
	if d, err := os.UserConfigDir(); err == nil {
		return filepath.Join(d, "deepresearch")
	}
	return ""
}

// StateDir is deepresearch's folder for what it keeps between sessions that is neither configuration nor cache
// (chat's input history): $XDG_STATE_HOME/deepresearch, else ~/.local/state/deepresearch; "" when neither is
// known. getenv nil means os.Getenv.
func StateDir(getenv func(string) string) string {
	return xdgDir(getenv, "XDG_STATE_HOME", ".local", "state")
}

// DataDir is deepresearch's folder in the user's data directory, where what no working folder owns is kept (the
// runs of the MCP server, which clients start in any folder): $XDG_DATA_HOME/deepresearch, else
// ~/.local/share/deepresearch — on macOS ~/Library/Application Support/deepresearch, on Windows
// %LOCALAPPDATA%\deepresearch. "" when the environment names no home. getenv nil means os.Getenv.
func DataDir(getenv func(string) string) string {
	if getenv == nil {
		getenv = os.Getenv
	}
	if d := getenv("XDG_DATA_HOME"); d == "" || !filepath.IsAbs(d) {
		switch runtime.GOOS {
		case "windows":
			if d := getenv("LOCALAPPDATA"); d != "" {
				return filepath.Join(d, "deepresearch")
			}
		case "darwin":
			if h := getenv("HOME"); h != "" && filepath.IsAbs(h) {
				return filepath.Join(h, "Library", "Application Support", "deepresearch")
			}
		}
	}
	return xdgDir(getenv, "XDG_DATA_HOME", ".local", "share")
}

// xdgDir is deepresearch's folder under the base directory the variable names (an absolute path), else under
// the home folder's fallback path; "" when neither is known. getenv nil means os.Getenv.
func xdgDir(getenv func(string) string, variable string, fallback ...string) string {
	if getenv == nil {
		getenv = os.Getenv
	}
	if d := getenv(variable); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "deepresearch")
	}
	if h := getenv("HOME"); h != "" && filepath.IsAbs(h) {
		return filepath.Join(append(append([]string{h}, fallback...), "deepresearch")...)
	}
	return ""
}

// Trust is the record of folders whose deepresearch.yaml and .mcp.json the user trusts, kept in
// <UserDir>/trusted-folders.json. The zero value (no File) trusts nothing.
type Trust struct {
	File string
}

// NewTrust returns the trust record in the user's configuration directory.
func NewTrust(getenv func(string) string) Trust {
	d := UserDir(getenv)
	if d == "" {
		return Trust{}
	}
	return Trust{File: filepath.Join(d, "trusted-folders.json")}
}

type trustRecord struct {
	Folders []string `json:"folders"`
}

func (t Trust) read() (trustRecord, error) {
	var rec trustRecord
	if t.File == "" {
		return rec, nil
	}
	b, err := os.ReadFile(t.File)
	if errors.Is(err, fs.ErrNotExist) {
		return rec, nil
	}
	if err != nil {
		return rec, fmt.Errorf("trust record: %w", err)
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		return rec, fmt.Errorf("trust record %s: %w", t.File, err)
	}
	return rec, nil
}

// canonical is the absolute, link-free form of dir, so a trusted folder is the same however it is reached.
func canonical(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	return abs, nil
}

// Trusted reports whether dir was trusted. A record that cannot be read trusts nothing.
func (t Trust) Trusted(dir string) bool {
	d, err := canonical(dir)
	if err != nil {
		return false
	}
	rec, err := t.read()
	return err == nil && slices.Contains(rec.Folders, d)
}

// Add trusts dir.
func (t Trust) Add(dir string) (string, error) {
	if t.File == "" {
		return "", errors.New("trust: no user configuration directory (set HOME or XDG_CONFIG_HOME)")
	}
	d, err := canonical(dir)
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("trust: %s is not a folder", dir)
	}
	rec, err := t.read()
	if err != nil {
		return "", err
	}
	if !slices.Contains(rec.Folders, d) {
		rec.Folders = append(rec.Folders, d)
		slices.Sort(rec.Folders)
	}
	b, _ := json.MarshalIndent(rec, "", "  ")
	if err := os.MkdirAll(filepath.Dir(t.File), 0o700); err != nil {
		return "", fmt.Errorf("trust: %w", err)
	}
	if err := atomicfile.Write(t.File, append(b, '\n'), 0o600); err != nil {
		return "", fmt.Errorf("trust: %w", err)
	}
	return d, nil
}

// Remove stops trusting dir.
func (t Trust) Remove(dir string) error {
	d, err := canonical(dir)
	if err != nil {
		return err
	}
	rec, err := t.read()
	if err != nil {
		return err
	}
	i := slices.Index(rec.Folders, d)
	if i < 0 {
		return fmt.Errorf("trust: %s was not trusted", d)
	}
	rec.Folders = slices.Delete(rec.Folders, i, i+1)
	b, _ := json.MarshalIndent(rec, "", "  ")
	return atomicfile.Write(t.File, append(b, '\n'), 0o600)
}

// List returns the trusted folders.
func (t Trust) List() ([]string, error) {
	rec, err := t.read()
	return rec.Folders, err
}

// LocalFiles returns the working-folder configuration files present in dir (deepresearch.yaml, .mcp.json).
func LocalFiles(dir string) []string {
	var out []string
	for _, f := range []string{LocalFile, LocalMCPFile} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err == nil && !fi.IsDir() {
			out = append(out, f)
		}
	}
	return out
}
