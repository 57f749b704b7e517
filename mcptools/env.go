package mcptools

import (
	"strings"
)

// baseEnvNames are the variables every stdio MCP server inherits: what a program needs to find its tools, its
// home, its temporary folder and the user's language. Nothing else of the user's environment — above all no API
// key — reaches a server unless its entry names it in "env" (for example "env": {"GITHUB_TOKEN":
// "${GITHUB_TOKEN}"}).
var baseEnvNames = map[string]bool{
	"PATH": true, "HOME": true, "USER": true, "LOGNAME": true, "SHELL": true, "TERM": true, "TZ": true,
	"LANG": true, "LANGUAGE": true, "TMPDIR": true, "TEMP": true, "TMP": true,
	"XDG_CONFIG_HOME": true, "XDG_CACHE_HOME": true, "XDG_DATA_HOME": true, "XDG_STATE_HOME": true, "XDG_RUNTIME_DIR": true,
	// Windows essentials.
	"SYSTEMROOT": true, "SYSTEMDRIVE": true, "WINDIR": true, "COMSPEC": true, "PATHEXT": true, "USERPROFILE": true,
	"APPDATA": true, "LOCALAPPDATA": true, "PROGRAMDATA": true, "PROGRAMFILES": true, "HOMEDRIVE": true, "HOMEPATH": true,
}

// MinimalEnviron keeps from environ (KEY=value entries, as os.Environ returns) only the variables every stdio
// server inherits: PATH, HOME, USER, the locale (LANG, LC_*), the temporary folder, the XDG folders and the
// Windows essentials.
func MinimalEnviron(environ []string) []string {
	var out []string
	for _, kv := range environ {
		k, _, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if baseEnvNames[strings.ToUpper(k)] || strings.HasPrefix(k, "LC_") {
			out = append(out, kv)
		}
	}
	return out
}
