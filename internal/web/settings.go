package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode"

	"github.com/packs-run/packs/internal/llm"
	"github.com/packs-run/packs/internal/secrets"
)

// The model a person sets on the Settings page is kept in two places in
// the state directory: the API key in the secret store (internal/secrets)
// under ModelKeySecret, and everything else in ModelFile. Neither is in
// packs.db (RATIONALE.md: "Why are the web app's model settings a file?").
const (
	ModelFile      = "model.json"
	ModelKeySecret = "PACKS_MODEL_API_KEY"
)

// MaxModelTokens bounds the max tokens a person can save.
const MaxModelTokens = 1 << 20

// testTimeout bounds the Settings page's "Test connection" request.
const testTimeout = 30 * time.Second

// savedModelFile is ModelFile on disk.
type savedModelFile struct {
	Version   int    `json:"version"`
	Provider  string `json:"provider"`
	BaseURL   string `json:"base_url"`
	Model     string `json:"model"`
	MaxTokens int    `json:"max_tokens"`
}

// LoadSavedModel reads the model saved on the Settings page in the state
// directory home, its key from the secret store. ok is false when nothing
// was saved there.
func LoadSavedModel(home string) (c llm.Config, ok bool, err error) {
	path := filepath.Join(home, ModelFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return llm.Config{}, false, nil
	}
	if err != nil {
		return llm.Config{}, false, fmt.Errorf("web: reading the saved model settings: %w", err)
	}
	var f savedModelFile
	if err := json.Unmarshal(b, &f); err != nil || f.Version != 1 {
		return llm.Config{}, false, fmt.Errorf("%w: %s is not a packs model settings file (version 1): save the model again on the Settings page, or delete the file", llm.ErrConfig, path)
	}
	c = llm.Config{Provider: f.Provider, BaseURL: f.BaseURL, Model: f.Model, MaxTokens: f.MaxTokens}
	key, found, err := secrets.Open(home).Lookup(ModelKeySecret)
	if err != nil {
		return llm.Config{}, false, err
	}
	if found {
		c.APIKey = string(key)
	}
	return c, true, nil
}

// saveModelFile writes ModelFile whole (mode 0600), never half.
func saveModelFile(home string, c llm.Config) error {
	b, err := json.MarshalIndent(savedModelFile{Version: 1, Provider: c.Provider, BaseURL: c.BaseURL, Model: c.Model, MaxTokens: c.MaxTokens}, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(home, ".model-*.tmp")
	if err != nil {
		return fmt.Errorf("web: saving the model settings: %w", err)
	}
	defer os.Remove(f.Name())
	err = f.Chmod(0o600)
	if err == nil {
		_, err = f.Write(append(b, '\n'))
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), filepath.Join(home, ModelFile))
	}
	if err != nil {
		return fmt.Errorf("web: saving the model settings: %w", err)
	}
	return nil
}

// currentModel is the model the next turn uses. A turn takes it once, at
// its start: a save changes the next turn, never one in flight.
func (s *Server) currentModel() Model {
	s.modelMu.RLock()
	defer s.modelMu.RUnlock()
	return s.model
}

// resolveModel lays saved under packs serve's config file, environment
// and flags (Config.ResolveModel); without them saved stands alone.
func (s *Server) resolveModel(saved llm.Config) (llm.Config, []llm.Override, error) {
	if s.cfg.ResolveModel != nil {
		return s.cfg.ResolveModel(saved)
	}
	return llm.ResolveSaved("", saved, func(string) string { return "" }, llm.Config{})
}

// modelSettingsJSON is one model's settings: never its key, only whether
// one is set.
type modelSettingsJSON struct {
	Provider  string `json:"provider"`
	BaseURL   string `json:"base_url"`
	Model     string `json:"model"`
	MaxTokens int    `json:"max_tokens"`
	APIKeySet bool   `json:"api_key_set"`
}

func settingsOf(c llm.Config) *modelSettingsJSON {
	return &modelSettingsJSON{Provider: c.Provider, BaseURL: c.BaseURL, Model: c.Model, MaxTokens: c.MaxTokens, APIKeySet: c.APIKey != ""}
}

// settingsJSON is GET /v1/settings/model.
type settingsJSON struct {
	// Saved is what the Settings page saved; null when nothing was.
	Saved *modelSettingsJSON `json:"saved"`
	// Effective is the model chats use now; null when there is none.
	Effective *modelSettingsJSON `json:"effective"`
	Describe  string             `json:"describe,omitempty"`
	// Overrides are the settings packs serve's flags and environment fix:
	// they win over saved ones.
	Overrides []llm.Override `json:"overrides"`
	// Error says why the saved settings make no model, when they do not.
	Error string `json:"error,omitempty"`
	// Defaults fill a form with nothing saved: per provider.
	Defaults map[string]modelSettingsJSON `json:"defaults"`
}

var modelDefaults = map[string]modelSettingsJSON{
	llm.ProviderOpenAI:    {Provider: llm.ProviderOpenAI, BaseURL: llm.DefaultOpenAIBaseURL, Model: llm.DefaultOpenAIModel, MaxTokens: llm.DefaultMaxTokens},
	llm.ProviderAnthropic: {Provider: llm.ProviderAnthropic, BaseURL: llm.DefaultAnthropicBaseURL, Model: llm.DefaultAnthropicModel, MaxTokens: llm.DefaultMaxTokens},
}

func (s *Server) getSettings(w http.ResponseWriter, r *http.Request) {
	out, err := s.settings()
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) settings() (settingsJSON, error) {
	out := settingsJSON{Overrides: []llm.Override{}, Defaults: modelDefaults}
	saved, ok, err := LoadSavedModel(s.cfg.App.Home.Dir())
	if err != nil && !errors.Is(err, llm.ErrConfig) {
		return out, err
	}
	if err != nil {
		out.Error = err.Error()
	}
	if ok {
		out.Saved = settingsOf(saved)
	}
	_, over, rerr := s.resolveModel(saved)
	out.Overrides = append(out.Overrides, over...)
	if ok && rerr != nil && out.Error == "" {
		out.Error = rerr.Error()
	}
	if m := s.currentModel(); m.Provider != nil {
		out.Describe = m.Describe
		if m.Config.Provider != "" {
			out.Effective = settingsOf(m.Config)
		}
	}
	return out, nil
}

// settingsBody is the body of PUT /v1/settings/model and of its test.
type settingsBody struct {
	Provider  string `json:"provider"`
	BaseURL   string `json:"base_url"`
	Model     string `json:"model"`
	MaxTokens int    `json:"max_tokens"`
	// APIKey: absent or null keeps the stored key, "" removes it, any
	// other value replaces it.
	APIKey *string `json:"api_key"`
}

// candidate checks the body and returns the settings it would save (the
// stored key when it names none) and the model they make under packs
// serve's flags and environment.
func (s *Server) candidate(b settingsBody) (saved, effective llm.Config, err error) {
	saved = llm.Config{Provider: b.Provider, BaseURL: strings.TrimSpace(b.BaseURL), Model: strings.TrimSpace(b.Model), MaxTokens: b.MaxTokens}
	switch {
	case saved.Provider != llm.ProviderOpenAI && saved.Provider != llm.ProviderAnthropic:
		return saved, effective, fmt.Errorf("%w: provider %q: choose openai (OpenAI-compatible: Ollama, llama.cpp, vLLM, OpenAI) or anthropic", errBadRequest, saved.Provider)
	case saved.BaseURL == "" || saved.Model == "":
		return saved, effective, fmt.Errorf("%w: the base URL and the model are required", errBadRequest)
	case saved.MaxTokens < 1 || saved.MaxTokens > MaxModelTokens:
		return saved, effective, fmt.Errorf("%w: max tokens %d: give 1 to %d", errBadRequest, saved.MaxTokens, MaxModelTokens)
	}
	if b.APIKey == nil {
		v, _, err := secrets.Open(s.cfg.App.Home.Dir()).Lookup(ModelKeySecret)
		if err != nil {
			return saved, effective, err
		}
		saved.APIKey = string(v)
	} else {
		saved.APIKey = strings.TrimSpace(*b.APIKey)
		if strings.IndexFunc(saved.APIKey, unicode.IsSpace) >= 0 || len(saved.APIKey) > secrets.MaxValueBytes {
			return saved, effective, fmt.Errorf("%w: the API key holds spaces or line breaks, or is too long: paste the key alone", errBadRequest)
		}
	}
	effective, _, err = s.resolveModel(saved)
	if err != nil {
		return saved, effective, fmt.Errorf("%w: %w", errBadRequest, err)
	}
	return saved, effective, nil
}

// readCandidate reads a request's settings and builds the provider they
// describe (with the flags and environment laid over them); on a bad body
// or settings it answers the request and reports false.
func (s *Server) readCandidate(w http.ResponseWriter, r *http.Request) (b settingsBody, saved, effective llm.Config, p llm.Provider, ok bool) {
	if err := readJSON(w, r, &b); err != nil {
		s.fail(w, err)
		return b, saved, effective, nil, false
	}
	saved, effective, err := s.candidate(b)
	if err != nil {
		s.fail(w, err)
		return b, saved, effective, nil, false
	}
	if p, err = llm.New(effective); err != nil {
		s.fail(w, fmt.Errorf("%w: %w", errBadRequest, err))
		return b, saved, effective, nil, false
	}
	return b, saved, effective, p, true
}

// putSettings saves the model settings and applies them at once: the next
// turn of every chat uses the new model; a turn in flight keeps its own.
func (s *Server) putSettings(w http.ResponseWriter, r *http.Request) {
	b, saved, effective, p, ok := s.readCandidate(w, r)
	if !ok {
		return
	}
	var err error
	home := s.cfg.App.Home.Dir()
	store := secrets.Open(home)
	s.saveMu.Lock()
	defer s.saveMu.Unlock()
	switch {
	case b.APIKey != nil && saved.APIKey != "":
		err = store.Set(ModelKeySecret, []byte(saved.APIKey))
	case b.APIKey != nil:
		if err = store.Remove(ModelKeySecret); errors.Is(err, secrets.ErrNotFound) {
			err = nil
		}
	}
	if err == nil {
		err = saveModelFile(home, saved)
	}
	if err != nil {
		s.fail(w, err)
		return
	}
	s.modelMu.Lock()
	s.model = Model{Provider: p, Describe: DescribeModel(effective), NoTools: effective.NoTools, Config: effective}
	s.modelMu.Unlock()
	s.log.Info("web: model settings saved", "model", effective)
	out, err := s.settings()
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// DescribeModel says which model c is, for the UI, without its key.
func DescribeModel(c llm.Config) string {
	return fmt.Sprintf("%s %s at %s", c.Provider, c.Model, c.BaseURL)
}

// testSettings sends one short request to the model the body describes
// (not saved) and reports the provider's answer or its real error.
func (s *Server) testSettings(w http.ResponseWriter, r *http.Request) {
	_, _, effective, p, ok := s.readCandidate(w, r)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), testTimeout)
	defer cancel()
	start := time.Now()
	res, err := p.Complete(ctx, llm.Request{Model: effective.Model, MaxTokens: min(effective.MaxTokens, 64),
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "This is a connection test. Reply with the word OK."}}}, nil)
	out := map[string]any{"ok": err == nil, "describe": DescribeModel(effective), "duration_ms": time.Since(start).Milliseconds()}
	if err != nil {
		out["error"] = err.Error()
	} else {
		out["reply"] = clipReply(res.Message.Content)
	}
	writeJSON(w, http.StatusOK, out)
}

// clipReply cuts a test reply to a line's worth.
func clipReply(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 200 {
		return string(r[:199]) + "…"
	}
	return s
}
