#!/usr/bin/env sh
# Installs the pinned MCP reference servers the mcptools, subagent and CLI tests run over stdio.
#
#   mcptools/testdata/install.sh [DIR]
#
# DIR defaults to $DEEPRESEARCH_MCP_SERVERS_DIR, then ${XDG_CACHE_HOME:-$HOME/.cache}/deepresearch/mcp-servers.
# Tests find the servers through the same rule (see mcptools/mcptest.ServersDir), so CI runs this script once and
# then `go test`. Re-running is cheap: npm skips packages already at the pinned version.
set -eu

EVERYTHING_VERSION=2026.8.31
FILESYSTEM_VERSION=2026.8.31

dir=${1:-${DEEPRESEARCH_MCP_SERVERS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/deepresearch/mcp-servers}}
mkdir -p "$dir"

if ! command -v npm >/dev/null 2>&1; then
	echo "install.sh: npm is required (Node.js 20 or newer) to install the MCP reference servers" >&2
	exit 1
fi

npm install --prefix "$dir" --no-audit --no-fund --loglevel=error --save-exact \
	"@modelcontextprotocol/server-everything@$EVERYTHING_VERSION" \
	"@modelcontextprotocol/server-filesystem@$FILESYSTEM_VERSION"

for pkg in server-everything server-filesystem; do
	entry="$dir/node_modules/@modelcontextprotocol/$pkg/dist/index.js"
	if [ ! -f "$entry" ]; then
		echo "install.sh: $entry is missing after npm install" >&2
		exit 1
	fi
done
echo "MCP reference servers installed in $dir"
