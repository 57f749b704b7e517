package redact

import (
	"strings"
	"testing"
)

func TestScrub(t *testing.T) {
	s := New("sk-proj-TheUsersRealKey0123456789", "tvly-abcdefgh12345", "short")
	tests := []struct{ in, want string }{
		{`401: Incorrect API key provided: sk-proj-TheUsersRealKey0123456789.`, `401: Incorrect API key provided: [redacted].`},
		{`tavily: invalid key tvly-abcdefgh12345`, `tavily: invalid key [redacted]`},
		{`Authorization: Bearer abc.def-ghi_jkl`, `Authorization: Bearer [redacted]`},
		{`unknown key sk-ant-api03-ZZZZZZZZZZZZZZZZ in body`, `unknown key [redacted] in body`},
		{`GET https://api.example/v1?api_key=0123456789abcdef&q=x`, `GET https://api.example/v1?api_key=[redacted]&q=x`},
		{`{"error":{"x-api-key":"zz12zzzzzz"}}`, `{"error":{"x-api-key":"[redacted]"}}`},
		{`dial https://user:hunter22@proxy.example:8080/v1`, `dial https://user:[redacted]@proxy.example:8080/v1`},
		{`nothing secret here, short stays`, `nothing secret here, short stays`},
		{`tokens: 1200 input`, `tokens: 1200 input`},
		{`HTTP 401: invalid_api_key: Incorrect API key provided`, `HTTP 401: invalid_api_key: Incorrect API key provided`},
		{`max_token=4096`, `max_token=4096`},
		{`password: hunter22`, `password: [redacted]`},
		{`open postgres://db/x?password=word&sslmode=disable: refused`, `open postgres://db/x?password=[redacted]&sslmode=disable: refused`},
		{`GET /v1/search?key=plainword`, `GET /v1/search?key=[redacted]`},
	}
	for _, tt := range tests {
		if got := s.Scrub(tt.in); got != tt.want {
			t.Errorf("Scrub(%q)\n got %q\nwant %q", tt.in, got, tt.want)
		}
	}
	var none *Scrubber
	if got := none.Scrub("Bearer abcdefghijkl"); strings.Contains(got, "abcdefghijkl") {
		t.Errorf("nil scrubber kept a bearer token: %q", got)
	}
}

func TestFromEnv(t *testing.T) {
	env := map[string]string{"OPENAI_API_KEY": "key-from-env-123", "MY_KEY": "custom-secret-456"}
	s := FromEnv(func(k string) string { return env[k] }, "OPENAI_API_KEY", "MY_KEY")
	if got := s.Scrub("a key-from-env-123 b custom-secret-456"); got != "a [redacted] b [redacted]" {
		t.Errorf("got %q", got)
	}
}

func TestURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://user:sk-secret@api.example/v1":                                   "https://user:[redacted]@api.example/v1",
		"https://api.example/v1":                                                  "https://api.example/v1",
		"http://localhost:11434/v1":                                               "http://localhost:11434/v1",
		"postgres://research@db/research?password=hunter2&sslmode=require":        "postgres://research@db/research?password=[redacted]&sslmode=require",
		"postgres://db/r?sslmode=verify-full&sslpassword=p4ss&application_name=x": "postgres://db/r?sslmode=verify-full&sslpassword=[redacted]&application_name=x",
		"https://api.example/search?q=go&key=abc&Token=xyz#frag":                  "https://api.example/search?q=go&key=[redacted]&Token=[redacted]#frag",
		"https://u:pw@h/p?PASSWORD=x":                                             "https://u:[redacted]@h/p?PASSWORD=[redacted]",
		"https://api.example/v1?monkey=banana&keyboard=qwerty":                    "https://api.example/v1?monkey=banana&keyboard=qwerty",
	} {
		if got := URL(in); got != want {
			t.Errorf("URL(%q) = %q, want %q", in, got, want)
		}
	}
}
