#!/bin/sh
# Installs what the mcpserver tests drive deepresearch with from other implementations, pinned: the official
# TypeScript SDK (a client), the official MCP conformance suite, and a Node.js new enough to run the suite
# (>= 22; npm's node-linux-<arch> package is the binary the `node` package would fetch, so no download site is
# needed beyond the npm registry). CI runs this once before `go test`; the tests fail (not skip) without it.
# Idempotent: a package already at its pinned version is not installed again.
#
#   internal/mcpserver/testdata/install.sh            # into the default cache dir
#   DEEPRESEARCH_NODE_CACHE=/some/dir install.sh      # elsewhere (the tests read the same variable)
set -eu
DIR="${DEEPRESEARCH_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/deepresearch-test/node}"
SDK_VERSION=1.32.2
CONFORMANCE_VERSION=0.1.16
NODE_VERSION=22.23.3
case "$(uname -m)" in
x86_64 | amd64) NODE_ARCH=x64 ;;
aarch64 | arm64) NODE_ARCH=arm64 ;;
*) NODE_ARCH="$(uname -m)" ;;
esac
NODE_PKG="node-linux-$NODE_ARCH"

mkdir -p "$DIR"
if [ ! -f "$DIR/package.json" ]; then
	printf '{"name":"deepresearch-mcp-test-client","private":true,"type":"module"}\n' >"$DIR/package.json"
fi

# has PACKAGE VERSION: the package is installed at exactly that version.
has() {
	grep -q "\"version\": *\"$2\"" "$DIR/node_modules/$1/package.json" 2>/dev/null
}

want=""
has @modelcontextprotocol/sdk "$SDK_VERSION" || want="$want @modelcontextprotocol/sdk@$SDK_VERSION"
has @modelcontextprotocol/conformance "$CONFORMANCE_VERSION" || want="$want @modelcontextprotocol/conformance@$CONFORMANCE_VERSION"
has "$NODE_PKG" "$NODE_VERSION" || want="$want $NODE_PKG@$NODE_VERSION"
if [ -n "$want" ]; then
	# shellcheck disable=SC2086 # one word per package
	npm install --prefix "$DIR" --no-audit --no-fund --silent --engine-strict=false $want
fi
echo "in $DIR: @modelcontextprotocol/sdk@$SDK_VERSION, @modelcontextprotocol/conformance@$CONFORMANCE_VERSION, $NODE_PKG@$NODE_VERSION (node $("$DIR/node_modules/$NODE_PKG/bin/node" --version))"
