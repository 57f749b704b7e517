#!/bin/sh
# Installs the MCP client from another implementation that the mcpserver tests drive deepresearch with: the
# official TypeScript SDK, pinned. CI runs this once before `go test`; the tests fail (not skip) without it.
#
#   internal/mcpserver/testdata/install.sh            # into the default cache dir
#   DEEPRESEARCH_NODE_CACHE=/some/dir install.sh      # elsewhere (the tests read the same variable)
set -eu
DIR="${DEEPRESEARCH_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/deepresearch-test/node}"
mkdir -p "$DIR"
if [ ! -f "$DIR/package.json" ]; then
	printf '{"name":"deepresearch-mcp-test-client","private":true,"type":"module"}\n' >"$DIR/package.json"
fi
npm install --prefix "$DIR" --no-audit --no-fund --silent @modelcontextprotocol/sdk@1.32.2
echo "installed @modelcontextprotocol/sdk@1.32.2 in $DIR"
