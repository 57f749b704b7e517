package mcptools_test

import (
	"testing"

	"github.com/deepresearch/deepresearch/mcptools"
)

// FuzzParse feeds arbitrary .mcp.json files to the parser: no panic; every entry it returns either carries its
// problem in Err or names a usable stdio command or HTTP URL.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"mcpServers":{"fs":{"command":"npx","args":["-y","@modelcontextprotocol/server-filesystem","${HOME:-/tmp}"]}}}`,
		`{"mcpServers":{"web":{"type":"http","url":"https://example.org/mcp","headers":{"Authorization":"Bearer ${TOKEN}"}}}}`,
		`{"mcpServers":{"":{}}}`, `{"mcpServers":{"x":{"type":"carrier-pigeon"}}}`, `{"mcpServers":null}`, `[]`, `{`,
		`{"mcpServers":{"x":{"command":"${UNSET}","env":{"K":"${A:-${B}}"}}}}`, `{"mcpServers":{"x":{"command":"a","initTimeout":"forever"}}}`,
	} {
		f.Add(s)
	}
	env := map[string]string{"HOME": "/home/u", "TOKEN": "t0k3n"}
	f.Fuzz(func(t *testing.T, data string) {
		file, err := mcptools.Parse([]byte(data), func(k string) string { return env[k] })
		if err != nil {
			return
		}
		for name, c := range file.Servers {
			if name == "" {
				t.Fatalf("a server with an empty name was accepted: %q", data)
			}
			if c.Err != nil {
				continue
			}
			switch c.Kind() {
			case mcptools.TypeStdio:
				if c.Command == "" {
					t.Fatalf("stdio server %q without a command accepted: %q", name, data)
				}
			case mcptools.TypeHTTP:
				if c.URL == "" {
					t.Fatalf("HTTP server %q without a URL accepted: %q", name, data)
				}
			}
		}
	})
}
