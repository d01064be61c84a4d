package llm

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"
)

// Provider names.
const (
	ProviderOpenAI    = "openai"
	ProviderAnthropic = "anthropic"
)

// Defaults. The default provider is a local Ollama, so packs works offline
// out of the box.
const (
	DefaultOpenAIBaseURL    = "http://localhost:11434/v1"
	DefaultOpenAIModel      = "llama3.2"
	DefaultAnthropicBaseURL = "https://api.anthropic.com"
	DefaultAnthropicModel   = "claude-sonnet-4-5"
	DefaultMaxTokens        = 4096
	DefaultTimeout          = 5 * time.Minute
)

// Config chooses and configures a provider. It comes from, in rising order
// of precedence: defaults, the config file's [llm] table, the environment,
// and flags (see Resolve).
type Config struct {
	Provider string // ProviderOpenAI or ProviderAnthropic
	BaseURL  string
	Model    string
	// APIKey is sent to the provider and nowhere else: String and LogValue
	// redact it, and nothing stores it.
	APIKey    string
	MaxTokens int
	// Timeout bounds one model request, stream included.
	Timeout time.Duration
	// NoTools sends no tool definitions, for models without tool calling.
	NoTools bool
}

// String describes c without its key.
func (c Config) String() string {
	key := "none"
	if c.APIKey != "" {
		key = "set"
	}
	return fmt.Sprintf("provider=%s base_url=%s model=%s api_key=%s", c.Provider, c.BaseURL, c.Model, key)
}

// LogValue keeps the key out of logs.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("provider", c.Provider),
		slog.String("base_url", c.BaseURL),
		slog.String("model", c.Model),
		slog.Bool("api_key_set", c.APIKey != ""),
	)
}

// Validate checks c once, so a provider never meets a bad value mid-call.
func (c Config) Validate() error {
	switch c.Provider {
	case ProviderOpenAI, ProviderAnthropic:
	default:
		return fmt.Errorf("%w: provider %q: use openai or anthropic", ErrConfig, c.Provider)
	}
	u, err := url.Parse(c.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%w: base URL %q: use an http:// or https:// URL such as %s", ErrConfig, c.BaseURL, DefaultOpenAIBaseURL)
	}
	if c.Model == "" {
		return fmt.Errorf("%w: no model: pass --model or set PACKS_MODEL", ErrConfig)
	}
	if c.APIKey == "" && hostedAPI[u.Hostname()] {
		return fmt.Errorf("%w: no API key for %s at %s: set %s or PACKS_API_KEY (or name the variable with api_key_env in the config file)", ErrConfig, c.Provider, u.Host, providerKeyEnv(c.Provider))
	}
	if c.MaxTokens <= 0 {
		return fmt.Errorf("%w: max_tokens must be positive", ErrConfig)
	}
	if c.Timeout <= 0 {
		return fmt.Errorf("%w: timeout must be positive", ErrConfig)
	}
	return nil
}

// fileConfig is the [llm] table of the config file.
type fileConfig struct {
	LLM struct {
		Provider  string `toml:"provider"`
		BaseURL   string `toml:"base_url"`
		Model     string `toml:"model"`
		APIKeyEnv string `toml:"api_key_env"` // the variable that holds the key
		MaxTokens int    `toml:"max_tokens"`
		Timeout   string `toml:"timeout"` // a Go duration: "90s", "5m"
		Tools     *bool  `toml:"tools"`
	} `toml:"llm"`
	// Discover is the [discover] table, which internal/app reads (the
	// skills folders looked in): decoded here only so it is not unknown.
	Discover map[string]any `toml:"discover"`
}

// fileSettings is a parsed config file.
type fileSettings struct {
	c         Config
	apiKeyEnv string
}

// parseConfigFile parses the [llm] table of a config file. name is used in
// errors, which carry the line and say what to do.
func parseConfigFile(name string, data []byte) (fileSettings, error) {
	var f fileConfig
	dec := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return fileSettings{}, configFileError(name, err)
	}
	l := f.LLM
	s := fileSettings{apiKeyEnv: l.APIKeyEnv, c: Config{Provider: l.Provider, BaseURL: l.BaseURL, Model: l.Model, MaxTokens: l.MaxTokens}}
	if l.Provider != "" && l.Provider != ProviderOpenAI && l.Provider != ProviderAnthropic {
		return fileSettings{}, fmt.Errorf("%w: %s: [llm] provider %q: use openai or anthropic", ErrConfig, name, l.Provider)
	}
	if l.MaxTokens < 0 {
		return fileSettings{}, fmt.Errorf("%w: %s: [llm] max_tokens must be positive", ErrConfig, name)
	}
	if l.Timeout != "" {
		d, err := time.ParseDuration(l.Timeout)
		if err != nil || d <= 0 {
			return fileSettings{}, fmt.Errorf("%w: %s: [llm] timeout %q: write a positive duration such as \"90s\" or \"5m\"", ErrConfig, name, l.Timeout)
		}
		s.c.Timeout = d
	}
	if l.Tools != nil {
		s.c.NoTools = !*l.Tools
	}
	if l.APIKeyEnv != "" && strings.ContainsAny(l.APIKeyEnv, "= \t\n") {
		return fileSettings{}, fmt.Errorf("%w: %s: [llm] api_key_env names an environment variable, not a key", ErrConfig, name)
	}
	return s, nil
}

func configFileError(name string, err error) error {
	var strict *toml.StrictMissingError
	if errors.As(err, &strict) && len(strict.Errors) > 0 {
		e := strict.Errors[0]
		row, _ := e.Position()
		return fmt.Errorf("%w: %s:%d: unknown key %q: the [llm] table takes provider, base_url, model, api_key_env, max_tokens, timeout and tools", ErrConfig, name, row, strings.Join(e.Key(), "."))
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		row, _ := de.Position()
		return fmt.Errorf("%w: %s:%d: %s: fix the TOML syntax", ErrConfig, name, row, strings.TrimPrefix(de.Error(), "toml: "))
	}
	return fmt.Errorf("%w: %s: %v", ErrConfig, name, err)
}

// Resolve builds the effective configuration: defaults, then the config file
// at path (absent is fine), then the environment (PACKS_PROVIDER,
// PACKS_BASE_URL, PACKS_MODEL; the key from the file's api_key_env, else
// PACKS_API_KEY, else OPENAI_API_KEY or ANTHROPIC_API_KEY), then flags, whose
// non-zero fields win. The key is never read from a flag or the file.
func Resolve(path string, getenv func(string) string, flags Config) (Config, error) {
	c, _, err := ResolveSaved(path, Config{}, getenv, flags)
	return c, err
}

// Override is a setting that packs was started with, from the environment
// or a flag: it wins over a saved setting.
type Override struct {
	Setting string `json:"setting"` // provider, base_url, model or api_key
	From    string `json:"from"`    // the variable or flag: "PACKS_MODEL", "--model"
}

// ResolveSaved is Resolve with one more layer: saved, the settings a person
// saved in the web app (its key from the secret store), laid over the
// config file and under the environment and flags. It also returns the
// settings that the environment and flags fix, so that the app can say
// which of its saved ones do not apply.
func ResolveSaved(path string, saved Config, getenv func(string) string, flags Config) (Config, []Override, error) {
	var s fileSettings
	if path != "" {
		data, err := os.ReadFile(path)
		switch {
		case err == nil:
			if s, err = parseConfigFile(path, data); err != nil {
				return Config{}, nil, err
			}
		case !errors.Is(err, os.ErrNotExist):
			return Config{}, nil, fmt.Errorf("%w: %v", ErrConfig, err)
		}
	}
	var over []Override
	fix := func(setting, from, v string) {
		if v != "" {
			over = append(over, Override{Setting: setting, From: from})
		}
	}
	env := Config{Provider: getenv("PACKS_PROVIDER"), BaseURL: getenv("PACKS_BASE_URL"), Model: getenv("PACKS_MODEL")}
	fix("provider", "PACKS_PROVIDER", env.Provider)
	fix("base_url", "PACKS_BASE_URL", env.BaseURL)
	fix("model", "PACKS_MODEL", env.Model)
	fix("provider", "--provider", flags.Provider)
	fix("base_url", "--base-url", flags.BaseURL)
	fix("model", "--model", flags.Model)
	c := overlay(s.c, saved)
	c = overlay(c, env)
	c = overlay(c, flags)
	if c.Provider == "" {
		c.Provider = ProviderOpenAI
	}
	if c.BaseURL == "" {
		c.BaseURL = DefaultOpenAIBaseURL
		if c.Provider == ProviderAnthropic {
			c.BaseURL = DefaultAnthropicBaseURL
		}
	}
	if c.Model == "" {
		c.Model = DefaultOpenAIModel
		if c.Provider == ProviderAnthropic {
			c.Model = DefaultAnthropicModel
		}
	}
	if c.MaxTokens == 0 {
		c.MaxTokens = DefaultMaxTokens
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	for _, name := range []string{s.apiKeyEnv, "PACKS_API_KEY", providerKeyEnv(c.Provider)} {
		if v := envValue(getenv, name); v != "" {
			c.APIKey = v
			fix("api_key", name, v)
			break
		}
	}
	return c, over, c.Validate()
}

// envValue is getenv for a variable name that may be empty (no file's
// api_key_env).
func envValue(getenv func(string) string, name string) string {
	if name == "" {
		return ""
	}
	return getenv(name)
}

// hostedAPI are the providers' own services, which answer every request
// without a key with an error: without one, packs says so before a chat
// starts. Servers of one's own (Ollama, a proxy) may need none.
var hostedAPI = map[string]bool{"api.anthropic.com": true, "api.openai.com": true}

func providerKeyEnv(provider string) string {
	if provider == ProviderAnthropic {
		return "ANTHROPIC_API_KEY"
	}
	return "OPENAI_API_KEY"
}

// overlay returns base with every non-zero field of top laid over it. A
// layer that switches the provider drops the lower layers' base URL and
// model, which were meant for the other provider.
func overlay(base, top Config) Config {
	if top.Provider != "" {
		if was := cmp.Or(base.Provider, ProviderOpenAI); top.Provider != was {
			base.BaseURL, base.Model = "", ""
		}
		base.Provider = top.Provider
	}
	if top.BaseURL != "" {
		base.BaseURL = top.BaseURL
	}
	if top.Model != "" {
		base.Model = top.Model
	}
	if top.APIKey != "" {
		base.APIKey = top.APIKey
	}
	if top.MaxTokens != 0 {
		base.MaxTokens = top.MaxTokens
	}
	if top.Timeout != 0 {
		base.Timeout = top.Timeout
	}
	if top.NoTools {
		base.NoTools = true
	}
	return base
}
