package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/app"
	"github.com/packs-run/packs/internal/chat"
	"github.com/packs-run/packs/internal/chat/terminal"
	"github.com/packs-run/packs/internal/llm"
	"github.com/packs-run/packs/internal/web"
)

// configFile is the config file in the state directory; packs chat reads
// its [llm] table.
const configFile = "config.toml"

func (c *cli) chatCommand() *cobra.Command {
	var (
		flags   llm.Config
		attach  []string
		message string
		yes     bool
		asJSON  bool
		chatID  string
		wsDir   string
		agent   string
	)
	cmd := &cobra.Command{
		Use:   "chat [--provider openai|anthropic] [--base-url URL] [--model NAME] [--attach PACK]... [--message TEXT [--yes] [--json]] [--agent NAME] [--chat ID | --workspace DIR]",
		Short: "Chat with a model that uses the attached packs, one approved step at a time",
		Long: `packs chat talks to a model (OpenAI-compatible Chat Completions, by default a
local Ollama at ` + llm.DefaultOpenAIBaseURL + `, or Anthropic Messages). The model
sees the attached packs' names and descriptions only; it opens their docs,
reads their files and enables their tools through base tools, and every call
waits for your approval: Run, Deny, or Always for this chat, one key (r, d
or a, no Enter) when stdin is a terminal. Ctrl-C stops a running tool or
reply; at the prompt it leaves, and --chat ID resumes. At a terminal the
model's Markdown is rendered (headings, emphasis, code, lists, links,
tables); with NO_COLOR set, TERM=dumb or stdout not a terminal, replies are
printed as the model wrote them.

With --message, one turn runs without a terminal: the reply and each tool
call with its decision are printed, and --yes approves this turn's calls.
With --json as well, stdout is one JSON object instead:

  {"chat": "chat_...", "reply": "the model's text", "steps": 3,
   "calls": [{"name": "web-reader__fetch", "pack": "web-reader",
              "arguments": {...}, "approved": true, "approver": "--yes",
              "remembered": false, "reason": "", "result": {...},
              "is_error": false, "error_kind": "", "artifacts": [],
              "duration_ms": 41.2}],
   "notices": []}

result is what the model was sent: the tool's JSON result, or
{"error": {"kind": ..., "message": ...}}; reason says why a call was
refused; artifacts are files the call left in the workspace ({"path",
"type", "mime", "size_bytes"}). --chat ID resumes that chat.

--agent NAME starts the chat from an agent (packs agent): its capabilities
are attached first, in order, its system prompt follows the packs' metadata,
and its model and max_tokens, when it sets them, are used in place of the
configured ones, for this chat's whole life.

Settings come from flags, then PACKS_PROVIDER, PACKS_BASE_URL, PACKS_MODEL,
then the model saved on the web app's Settings page (<home>/model.json),
then the [llm] table of <home>/config.toml (provider, base_url, model,
api_key_env, max_tokens, timeout, tools). The API key comes from the
environment: the variable api_key_env names, else PACKS_API_KEY, else
OPENAI_API_KEY or ANTHROPIC_API_KEY; else the key saved on the Settings page
(the secret PACKS_MODEL_API_KEY).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if yes && message == "" {
				return usageError("chat: --yes goes with --message; at the terminal you approve each call")
			}
			if asJSON && message == "" {
				return usageError("chat: --json goes with --message: the interactive chat prints text")
			}
			if wsDir != "" && chatID != "" {
				return usageError("chat: --workspace starts a new chat in DIR; a chat resumed with --chat keeps its own workspace")
			}
			if agent != "" && chatID != "" {
				return usageError("chat: --agent starts a new chat; a chat resumed with --chat keeps the agent it started from")
			}
			if wsDir != "" {
				abs, err := filepath.Abs(wsDir)
				if err != nil {
					return usageError("chat: --workspace: %v", err)
				}
				wsDir = abs
			}
			ctx := cmd.Context()
			a, deps, closeSession, err := c.openSession(ctx, nil)
			if err != nil {
				return err
			}
			defer closeSession()
			cfg, err := c.configuredModel(a.Home.Dir(), flags)
			if err != nil {
				return err
			}
			provider, err := llm.New(cfg)
			if err != nil {
				return usageError("%v", err)
			}
			opt := chat.Options{ID: chatID, Attach: attach, Workspace: wsDir}
			if agent != "" {
				ag, err := a.ChatAgent(ctx, agent)
				if errors.Is(err, app.ErrAgentNotFound) {
					return exitWith(exitUsage, err)
				}
				if err != nil {
					return agentError(err)
				}
				for _, w := range ag.Warnings {
					fmt.Fprintln(c.stderr, "packs: warning: "+w)
				}
				opt.Profile = chat.Profile{Agent: ag.ID, SystemPrompt: ag.SystemPrompt, Model: ag.Model, MaxTokens: ag.MaxTokens}
				opt.Attach = append(slices.Clone(ag.Packs), attach...)
			}
			s, err := chat.Open(ctx, deps, opt)
			if err != nil {
				if errors.Is(err, chat.ErrNotFound) {
					return exitWith(exitUsage, err)
				}
				return err
			}
			if asJSON {
				return c.chatOnceJSON(ctx, s, message, provider, cfg.NoTools, yes)
			}
			if message != "" {
				return terminal.Once(ctx, s, message, terminal.OnceOptions{Out: c.stdout, Err: c.stderr, Provider: provider, NoTools: cfg.NoTools, Yes: yes})
			}
			ictx, intr, stop := interactiveSignals(ctx)
			defer stop()
			topt := terminal.Options{In: c.stdin, Out: c.stdout, Provider: provider, NoTools: cfg.NoTools, Interrupts: intr,
				DiscardTypeAhead: isTerminal(os.Stdin)}
			if isTerminal(os.Stdin) {
				topt.Keys = os.Stdin
			}
			if c.colour(os.Stdout) {
				topt.Markdown = true
				if w, _, err := term.GetSize(int(os.Stdout.Fd())); err == nil {
					topt.Width = w
				}
			}
			return terminal.Run(ictx, s, topt)
		},
	}
	f := cmd.Flags()
	f.StringVar(&flags.Provider, "provider", "", "openai (Chat Completions: Ollama, llama.cpp, vLLM, LM Studio, OpenAI) or anthropic (default openai)")
	f.StringVar(&flags.BaseURL, "base-url", "", "the provider's base URL (default "+llm.DefaultOpenAIBaseURL+" for openai, "+llm.DefaultAnthropicBaseURL+" for anthropic)")
	f.StringVar(&flags.Model, "model", "", "the model name (default "+llm.DefaultOpenAIModel+" for openai, "+llm.DefaultAnthropicModel+" for anthropic)")
	f.BoolVar(&flags.NoTools, "no-tools", false, "the model cannot call tools: send none, and include a pack's docs when a message starts with /PACK")
	f.StringArrayVar(&attach, "attach", nil, "attach an installed pack to the chat; repeatable")
	f.StringVar(&message, "message", "", "run one turn with this message without a terminal, print the reply and each tool call, and exit")
	f.BoolVar(&yes, "yes", false, "with --message: approve this turn's tool calls")
	f.BoolVar(&asJSON, "json", false, "with --message: print the turn as one JSON object (see above)")
	f.StringVar(&chatID, "chat", "", "resume the chat with this id")
	f.StringVar(&agent, "agent", "", "start the chat from this agent (name or id; see packs agent list)")
	f.StringVar(&wsDir, "workspace", "", "a new chat works in DIR (made when missing): its tools see it at /workspace, e.g. the logs to triage (default <home>/workspaces/CHAT)")
	return cmd
}

// colour reports whether f is a terminal that shows styles: not when
// NO_COLOR is set (no-color.org) or TERM is dumb.
func (c *cli) colour(f *os.File) bool {
	return isTerminal(f) && c.getenv("NO_COLOR") == "" && c.getenv("TERM") != "dumb"
}

// chatResult is packs chat --message --json: one turn.
type chatResult struct {
	Chat    string     `json:"chat"`
	Reply   string     `json:"reply"`
	Steps   int        `json:"steps"`
	Calls   []chatCall `json:"calls"`
	Notices []string   `json:"notices"`
}

// chatCall is one tool call of the turn and its outcome.
type chatCall struct {
	Name       string          `json:"name"`
	Pack       string          `json:"pack"`
	Arguments  json.RawMessage `json:"arguments"`
	Approved   bool            `json:"approved"`
	Approver   string          `json:"approver"`
	Remembered bool            `json:"remembered"`
	ByAttach   bool            `json:"by_attach"` // approved by the person's attaching the pack
	Reason     string          `json:"reason"`
	Result     json.RawMessage `json:"result"`
	IsError    bool            `json:"is_error"`
	ErrorKind  string          `json:"error_kind"`
	Artifacts  []chat.Artifact `json:"artifacts"`
	DurationMS float64         `json:"duration_ms"`
	WaitedMS   float64         `json:"waited_ms"` // the gate's wait for a decision
	RanMS      float64         `json:"ran_ms"`    // the approved call's run
}

// noticeList collects a turn's notices for chatResult.
type noticeList struct{ notices []string }

func (n *noticeList) Text(string)                                {}
func (n *noticeList) ToolStart(llm.ToolCall, context.CancelFunc) {}
func (n *noticeList) ToolDone(chat.ToolResult)                   {}
func (n *noticeList) Notice(msg string)                          { n.notices = append(n.notices, msg) }

// chatOnceJSON runs one turn without a terminal, like terminal.Once, and
// prints it as a chatResult.
func (c *cli) chatOnceJSON(ctx context.Context, s *chat.Session, message string, provider llm.Provider, noTools, yes bool) error {
	var approver capability.Approver
	if yes {
		approver = terminal.Yes{}
	}
	obs := &noticeList{notices: []string{}}
	reply, err := s.Send(ctx, provider, message, chat.TurnOptions{Approver: approver, Observer: obs, NoTools: noTools})
	if err != nil {
		return fmt.Errorf("chat %s (resume with --chat %s): %w", s.ID(), s.ID(), err)
	}
	res := chatResult{Chat: s.ID(), Reply: reply.Text, Steps: reply.Steps, Calls: []chatCall{}, Notices: obs.notices}
	for _, r := range reply.Calls {
		call := chatCall{
			Name: r.Name, Pack: r.Pack, Arguments: jsonOrString(string(r.Arguments)),
			Approved: r.Decision.Approved, Approver: r.Decision.Approver, Remembered: r.Decision.Remembered, ByAttach: r.Decision.ByAttach, Reason: r.Decision.Reason,
			Result: jsonOrString(r.Content), IsError: r.IsError, ErrorKind: r.ErrorKind,
			Artifacts: append([]chat.Artifact{}, r.Artifacts...), DurationMS: float64(r.Duration.Microseconds()) / 1000,
			WaitedMS: float64(r.Waited.Microseconds()) / 1000, RanMS: float64(r.RunTime.Microseconds()) / 1000,
		}
		res.Calls = append(res.Calls, call)
	}
	return writeJSON(c.stdout, res)
}

// jsonOrString is s itself when it is JSON, else s as a JSON string (a
// model may send arguments that do not parse).
func jsonOrString(s string) json.RawMessage {
	if s == "" {
		return json.RawMessage("null")
	}
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(s)
	return b
}

// interactiveSignals takes Ctrl-C away from the program-wide handler: in
// the chat it stops a tool or a reply, and ends only an idle chat. SIGTERM
// and SIGHUP still end it.
func interactiveSignals(parent context.Context) (context.Context, <-chan os.Signal, func()) {
	intr := make(chan os.Signal, 1)
	signal.Notify(intr, os.Interrupt)
	ctx, cancel := context.WithCancel(context.WithoutCancel(parent))
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		select {
		case <-term:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, intr, func() {
		signal.Stop(intr)
		signal.Stop(term)
		cancel()
	}
}

// configuredModel is the model settings a command runs with: the model
// set on the web app's Settings page, under the config file, the
// environment and flags (llm.ResolveSaved).
func (c *cli) configuredModel(home string, flags llm.Config) (llm.Config, error) {
	saved, _, err := web.LoadSavedModel(home)
	if err != nil {
		return llm.Config{}, usageError("%v", err)
	}
	cfg, _, err := llm.ResolveSaved(filepath.Join(home, configFile), saved, c.getenv, flags)
	if err != nil {
		return llm.Config{}, usageError("%v", err)
	}
	return cfg, nil
}
