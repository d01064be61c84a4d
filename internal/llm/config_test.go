package llm

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestResolvePrecedence(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(file, []byte(`[llm]
provider = "openai"
base_url = "http://file.example:8080/v1"
model = "file-model"
api_key_env = "MY_KEY"
max_tokens = 777
timeout = "90s"
tools = false
`), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		path  string
		env   map[string]string
		flags Config
		want  Config
	}{
		{"defaults", "", nil, Config{},
			Config{Provider: "openai", BaseURL: DefaultOpenAIBaseURL, Model: DefaultOpenAIModel, MaxTokens: DefaultMaxTokens, Timeout: DefaultTimeout}},
		{"anthropic defaults and key", "", map[string]string{"ANTHROPIC_API_KEY": "ak", "OPENAI_API_KEY": "ok"}, Config{Provider: "anthropic"},
			Config{Provider: "anthropic", BaseURL: DefaultAnthropicBaseURL, Model: DefaultAnthropicModel, APIKey: "ak", MaxTokens: DefaultMaxTokens, Timeout: DefaultTimeout}},
		{"file", file, map[string]string{"MY_KEY": "k1", "PACKS_API_KEY": "k2"}, Config{},
			Config{Provider: "openai", BaseURL: "http://file.example:8080/v1", Model: "file-model", APIKey: "k1", MaxTokens: 777, Timeout: 90 * time.Second, NoTools: true}},
		{"env over file", file, map[string]string{"PACKS_MODEL": "env-model", "PACKS_BASE_URL": "https://env.example/v1", "PACKS_API_KEY": "k2"}, Config{},
			Config{Provider: "openai", BaseURL: "https://env.example/v1", Model: "env-model", APIKey: "k2", MaxTokens: 777, Timeout: 90 * time.Second, NoTools: true}},
		{"flags over env", file, map[string]string{"PACKS_MODEL": "env-model", "PACKS_PROVIDER": "openai", "MY_KEY": "k1"}, Config{Model: "flag-model", Provider: "anthropic"},
			Config{Provider: "anthropic", BaseURL: DefaultAnthropicBaseURL, Model: "flag-model", APIKey: "k1", MaxTokens: 777, Timeout: 90 * time.Second, NoTools: true}},
		{"same provider keeps the file's URL", file, nil, Config{Provider: "openai"},
			Config{Provider: "openai", BaseURL: "http://file.example:8080/v1", Model: "file-model", MaxTokens: 777, Timeout: 90 * time.Second, NoTools: true}},
		{"missing file is fine", filepath.Join(dir, "absent.toml"), nil, Config{Model: "m"},
			Config{Provider: "openai", BaseURL: DefaultOpenAIBaseURL, Model: "m", MaxTokens: DefaultMaxTokens, Timeout: DefaultTimeout}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Resolve(c.path, env(c.env), c.flags)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("got  %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func TestConfigFileErrors(t *testing.T) {
	cases := []struct {
		name, doc, want string
	}{
		{"unknown key", "[llm]\nmodel = \"m\"\nbase = \"x\"\n", "cfg.toml:3: unknown key \"llm.base\""},
		{"unknown table", "[other]\nx = 1\n", "cfg.toml:1: unknown key \"other\""},
		{"syntax", "[llm]\nmodel = \n", "cfg.toml:2:"},
		{"bad provider", "[llm]\nprovider = \"gemini\"\n", "provider \"gemini\""},
		{"bad timeout", "[llm]\ntimeout = \"soon\"\n", "timeout \"soon\""},
		{"negative tokens", "[llm]\nmax_tokens = -1\n", "max_tokens must be positive"},
		{"key in api_key_env", "[llm]\napi_key_env = \"sk-abc def\"\n", "names an environment variable, not a key"},
		{"wrong type", "[llm]\nmodel = 3\n", "cfg.toml:2:"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := parseConfigFile("cfg.toml", []byte(c.doc))
			if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want ErrConfig saying %q", err, c.want)
			}
		})
	}
}

// TestConfigFileDiscover: the [discover] table, internal/app's, is not an
// unknown key to the [llm] reader.
func TestConfigFileDiscover(t *testing.T) {
	s, err := parseConfigFile("cfg.toml", []byte("[llm]\nmodel = \"m\"\n\n[discover]\npaths = [\"/skills\"]\nuser = false\n"))
	if err != nil || s.c.Model != "m" {
		t.Errorf("got %+v, %v", s.c, err)
	}
}

func TestValidate(t *testing.T) {
	good := Config{Provider: "openai", BaseURL: "http://localhost:1/v1", Model: "m", MaxTokens: 1, Timeout: time.Second}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []Config{
		{Provider: "x", BaseURL: good.BaseURL, Model: "m", MaxTokens: 1, Timeout: time.Second},
		{Provider: "openai", BaseURL: "ftp://h", Model: "m", MaxTokens: 1, Timeout: time.Second},
		{Provider: "openai", BaseURL: "http://", Model: "m", MaxTokens: 1, Timeout: time.Second},
		{Provider: "openai", BaseURL: good.BaseURL, Model: "", MaxTokens: 1, Timeout: time.Second},
		{Provider: "openai", BaseURL: good.BaseURL, Model: "m", MaxTokens: 0, Timeout: time.Second},
		{Provider: "openai", BaseURL: good.BaseURL, Model: "m", MaxTokens: 1},
	} {
		if err := bad.Validate(); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: got %v, want ErrConfig", bad, err)
		}
		if _, err := New(bad); !errors.Is(err, ErrConfig) {
			t.Errorf("New(%+v): got %v, want ErrConfig", bad, err)
		}
	}
}

// TestKeyIsRedacted: the key never shows in String or in logs.
func TestKeyIsRedacted(t *testing.T) {
	c := Config{Provider: "openai", BaseURL: "http://h/v1", Model: "m", APIKey: "sk-secret-123"}
	var logs bytes.Buffer
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("provider", "config", c)
	for _, s := range []string{c.String(), logs.String()} {
		if strings.Contains(s, "sk-secret-123") || !strings.Contains(s, "http://h/v1") {
			t.Errorf("got %s", s)
		}
	}
}

func FuzzConfigFile(f *testing.F) {
	for _, s := range []string{
		"[llm]\nprovider = \"openai\"\nbase_url = \"http://x/v1\"\nmodel = \"m\"\ntimeout = \"5s\"\ntools = true\n",
		"[llm]\nmax_tokens = 10\napi_key_env = \"K\"\n",
		"[llm\n", "x = 1", "[llm]\ntimeout = 5\n", "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := parseConfigFile("fuzz.toml", data)
		if err != nil {
			if !errors.Is(err, ErrConfig) {
				t.Fatalf("error %v does not wrap ErrConfig", err)
			}
			return
		}
		if s.c.MaxTokens < 0 || s.c.Timeout < 0 {
			t.Fatalf("accepted %+v", s.c)
		}
		if s.c.Provider != "" && s.c.Provider != ProviderOpenAI && s.c.Provider != ProviderAnthropic {
			t.Fatalf("accepted provider %q", s.c.Provider)
		}
	})
}

// TestHostedAPINeedsKey: the providers' own services without an API key
// are refused before any request, naming the variable to set; a server of
// one's own needs none.
func TestHostedAPINeedsKey(t *testing.T) {
	for _, tt := range []struct {
		provider, base, key, want string
	}{
		{ProviderAnthropic, DefaultAnthropicBaseURL, "", "ANTHROPIC_API_KEY"},
		{ProviderOpenAI, "https://api.openai.com/v1", "", "OPENAI_API_KEY"},
		{ProviderAnthropic, DefaultAnthropicBaseURL, "sk-ant-x", ""},
		{ProviderOpenAI, DefaultOpenAIBaseURL, "", ""},
		{ProviderAnthropic, "http://127.0.0.1:8080", "", ""},
	} {
		c := Config{Provider: tt.provider, BaseURL: tt.base, Model: "m", APIKey: tt.key, MaxTokens: 10, Timeout: time.Second}
		err := c.Validate()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s at %s: %v", tt.provider, tt.base, err)
		case tt.want != "" && (!errors.Is(err, ErrConfig) || !strings.Contains(errString(err), tt.want)):
			t.Errorf("%s at %s without a key: %v", tt.provider, tt.base, err)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestResolveSaved: settings saved in the web app lie over the config file
// and under the environment and flags, field by field, and each setting
// the environment or a flag fixes is named.
func TestResolveSaved(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(file, []byte("[llm]\nmodel = \"file-model\"\nmax_tokens = 777\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	saved := Config{Provider: "openai", BaseURL: "http://saved.example/v1", Model: "saved-model", APIKey: "saved-key", MaxTokens: 512}
	got, over, err := ResolveSaved(file, saved, env(nil), Config{})
	if err != nil {
		t.Fatal(err)
	}
	if want := (Config{Provider: "openai", BaseURL: "http://saved.example/v1", Model: "saved-model", APIKey: "saved-key", MaxTokens: 512, Timeout: DefaultTimeout}); got != want || len(over) != 0 {
		t.Errorf("saved over the file: got %+v %v, want %+v and no overrides", got, over, want)
	}
	got, over, err = ResolveSaved(file, saved, env(map[string]string{"PACKS_MODEL": "env-model", "OPENAI_API_KEY": "env-key"}), Config{BaseURL: "http://flag.example/v1"})
	if err != nil {
		t.Fatal(err)
	}
	if want := (Config{Provider: "openai", BaseURL: "http://flag.example/v1", Model: "env-model", APIKey: "env-key", MaxTokens: 512, Timeout: DefaultTimeout}); got != want {
		t.Errorf("environment and flags over saved: got %+v, want %+v", got, want)
	}
	wantOver := []Override{{"model", "PACKS_MODEL"}, {"base_url", "--base-url"}, {"api_key", "OPENAI_API_KEY"}}
	if len(over) != len(wantOver) {
		t.Fatalf("overrides: got %v, want %v", over, wantOver)
	}
	for i := range over {
		if over[i] != wantOver[i] {
			t.Errorf("override %d: got %v, want %v", i, over[i], wantOver[i])
		}
	}
}
