#!/bin/sh
# Installs the official OpenAI JavaScript client, pinned, which the OpenAI-compatible API's tests
# (internal/webui/openai_node_test.go) drive deepresearch with. It goes into the same folder as the MCP test
# clients (internal/mcpserver/testdata/install.sh), whose Node.js >= 22 package it runs on. CI runs this once before
# `go test`; the tests fail (not skip) without it. Idempotent: nothing is installed when the pinned version is.
#
#   internal/webui/testdata/install.sh            # into the default cache dir
#   DEEPRESEARCH_NODE_CACHE=/some/dir install.sh  # elsewhere (the tests read the same variable)
set -eu
DIR="${DEEPRESEARCH_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/deepresearch-test/node}"
OPENAI_VERSION=7.59.0

mkdir -p "$DIR"
if [ ! -f "$DIR/package.json" ]; then
	printf '{"name":"deepresearch-test-clients","private":true,"type":"module"}\n' >"$DIR/package.json"
fi
if ! grep -q "\"version\": *\"$OPENAI_VERSION\"" "$DIR/node_modules/openai/package.json" 2>/dev/null; then
	npm install --prefix "$DIR" --no-audit --no-fund --silent --engine-strict=false "openai@$OPENAI_VERSION"
fi
echo "in $DIR: openai@$OPENAI_VERSION"
