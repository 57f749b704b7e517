// Package mcptest locates the pinned MCP reference servers that tests run over stdio, and builds their
// configuration entries. The servers are installed by mcptools/testdata/install.sh; tests that need them fail
// (never skip) with a message saying how to install them.
package mcptest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/deepresearch/deepresearch/mcptools"
)

// EnvDir names the environment variable that points at the install directory.
const EnvDir = "DEEPRESEARCH_MCP_SERVERS_DIR"

// Versions of the reference servers install.sh pins.
const (
	EverythingVersion = "2026.8.31"
	FilesystemVersion = "2026.8.31"
)

// Dir is where install.sh puts the servers: $DEEPRESEARCH_MCP_SERVERS_DIR, else
// ${XDG_CACHE_HOME:-$HOME/.cache}/deepresearch/mcp-servers.
func Dir() string {
	if d := os.Getenv(EnvDir); d != "" {
		return d
	}
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "deepresearch", "mcp-servers")
}

// InstallScript is the path of install.sh.
func InstallScript() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "mcptools/testdata/install.sh"
	}
	return filepath.Join(filepath.Dir(file), "..", "testdata", "install.sh")
}

// entry returns the path of a server's entry script, failing the test if it is missing.
func entry(t testing.TB, pkg string) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatalf("node is not installed; the MCP reference-server tests need Node.js 20+ and %s", InstallScript())
	}
	p := filepath.Join(Dir(), "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("MCP reference server %s is not installed (%v).\nRun: %s\n(or set %s to the directory it installed into)", pkg, err, InstallScript(), EnvDir)
	}
	return p
}

// Everything returns a stdio entry for @modelcontextprotocol/server-everything.
func Everything(t testing.TB) mcptools.ServerConfig {
	t.Helper()
	return mcptools.ServerConfig{Command: "node", Args: []string{entry(t, "server-everything"), "stdio"}}
}

// Filesystem returns a stdio entry for @modelcontextprotocol/server-filesystem serving the given directories.
func Filesystem(t testing.TB, dirs ...string) mcptools.ServerConfig {
	t.Helper()
	return mcptools.ServerConfig{Command: "node", Args: append([]string{entry(t, "server-filesystem")}, dirs...)}
}

// JSON renders entries as a .mcp.json document.
func JSON(entries map[string]mcptools.ServerConfig) string {
	b, err := json.MarshalIndent(mcptools.File{Servers: entries}, "", "  ")
	if err != nil {
		panic(err) // ServerConfig always marshals
	}
	return string(b)
}

// NodeCache is the folder the Node.js test clients are installed into (internal/mcpserver/testdata/install.sh:
// the TypeScript MCP SDK, the conformance suite and a pinned Node.js; internal/webui/testdata/install.sh: the
// OpenAI JavaScript client): $DEEPRESEARCH_NODE_CACHE, else ${XDG_CACHE_HOME:-$HOME/.cache}/deepresearch-test/node.
func NodeCache() string {
	if d := os.Getenv("DEEPRESEARCH_NODE_CACHE"); d != "" {
		return d
	}
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, _ := os.UserHomeDir()
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "deepresearch-test", "node")
}

// Node is the Node.js the test clients run on: the pinned one install.sh puts in NodeCache, else node on the PATH.
// It fails the test when there is neither.
func Node(t testing.TB) string {
	t.Helper()
	arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	if p := filepath.Join(NodeCache(), "node_modules", "node-linux-"+arch, "bin", "node"); arch != "" {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	p, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node not found: install Node.js 22+ (internal/mcpserver/testdata/install.sh installs one)")
	}
	return p
}
