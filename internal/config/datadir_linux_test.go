package config

import (
	"path/filepath"
	"testing"
)

func TestDataDir(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"XDG_DATA_HOME": "/data", "HOME": "/home/u"}, filepath.Join("/data", "deepresearch")},
		{map[string]string{"XDG_DATA_HOME": "relative/data", "HOME": "/home/u"}, filepath.Join("/home/u", ".local", "share", "deepresearch")},
		{map[string]string{"HOME": "/home/u"}, filepath.Join("/home/u", ".local", "share", "deepresearch")},
		{map[string]string{"HOME": "relative"}, ""},
		{map[string]string{}, ""},
	} {
		if got := DataDir(env(tc.env)); got != tc.want {
			t.Errorf("DataDir(%v) = %q, want %q", tc.env, got, tc.want)
		}
	}
}
