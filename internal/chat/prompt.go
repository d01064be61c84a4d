package chat

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// Names of the base tools as the model sees them. Providers allow only
// [a-zA-Z0-9_-] in tool names, so spec 000's "capability_packs.open_docs"
// becomes "open_docs".
const (
	ToolOpenDocs    = "open_docs"
	ToolReadFile    = "read_file"
	ToolEnableTools = "enable_tools"
	ToolExec        = "exec_best_effort"
)

// packToolSep joins a pack and a tool name: "json-tools__query".
const packToolSep = "__"

// PackToolName is the name the model sees for a pack's tool.
func PackToolName(pack, tool string) string { return pack + packToolSep + tool }

// metadataHeader opens the metadata block, as spec 000 §5.2 writes it.
const metadataHeader = "Capability Packs (attached; metadata only):\n"

// bootstrap teaches the model how to use packs (spec 000 §5.3), with the
// provider-safe tool names.
const bootstrap = `You can use Capability Packs: folders of instructions, resources and tools that the person attached to this chat.
- Packs are available only if listed in "Capability Packs (attached; metadata only)".
- To use a pack's procedure, first call open_docs(pack_id).
- To access additional files, call read_file(pack_id, path, offset, length).
- If a pack has tools (has_tools_json: true) and you need execution, call enable_tools(pack_id) before attempting to call any pack tool; its tools then appear as <pack_id>__<tool>.
- Call exec_best_effort(pack_id, command, args) only when a pack's docs say to run a command that no pack tool covers.
- Never assume pack contents without opening/reading them.
- Prefer asking the user for missing inputs over guessing.
- The person approves every tool call. A call that comes back denied was refused: do not repeat it unchanged.
`

// bootstrapNoTools replaces bootstrap for a model that cannot call tools.
const bootstrapNoTools = `The person may attach Capability Packs to this chat; they are listed in "Capability Packs (attached; metadata only)".
This model cannot call tools, so it cannot open packs itself: when the person starts a message with /<pack_id>, that pack's instructions are included for that message. Never assume pack contents you have not been shown.
`

// packMeta is what the model is shown of one attached pack.
type packMeta struct {
	ID          string
	Name        string
	Description string
	HasTools    bool
	Priority    int // [knowledge] priority: higher is listed first
	// Prompt is the pack's system-prompt addition (a built-in pack's
	// prompt.md, see Prompter), shown while the pack is attached; "" for
	// none.
	Prompt string
}

// writeMeta appends one pack's entry to the metadata block: pack_id, name,
// description and has_tools_json, and no path.
func writeMeta(b *strings.Builder, m packMeta) {
	b.WriteString("- pack_id: ")
	b.WriteString(m.ID)
	b.WriteString("\n  name: ")
	b.WriteString(m.Name)
	b.WriteString("\n  description: ")
	b.WriteString(oneLine(m.Description))
	b.WriteString("\n  has_tools_json: ")
	b.WriteString(strconv.FormatBool(m.HasTools))
	b.WriteByte('\n')
}

// writePrompts appends the system-prompt additions of the attached packs
// that have one, in the order they were attached (spec 003: earlier
// capabilities' additions first).
func writePrompts(b *strings.Builder, ms []packMeta) {
	first := true
	for _, m := range ms {
		if m.Prompt == "" {
			continue
		}
		if first {
			b.WriteString("\nInstructions of attached packs:\n")
			first = false
		}
		b.WriteString("<pack_instructions pack_id=\"")
		b.WriteString(m.ID)
		b.WriteString("\">\n")
		b.WriteString(strings.TrimSpace(m.Prompt))
		b.WriteString("\n</pack_instructions>\n")
	}
}

// oneLine folds a description onto one line so it cannot break the block.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n\t") {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

// promptState is what the system prompt is built from.
type promptState struct {
	packs   []packMeta
	opened  []string // packs whose docs are in the conversation
	enabled []string // packs whose tools are offered
	noTools bool
	// agentPrompt is the system prompt of the agent the chat started
	// from; it follows the metadata, as spec 003 puts the capabilities'
	// additions before the agent's own prompt.
	agentPrompt string
	explicit    string // a pack the person invoked with /name in this message
	// injected is the explicit pack's entry doc, included for one request
	// when the model cannot call tools (spec 002 §6.3).
	injected string
}

// systemPrompt builds the system prompt: bootstrap, metadata block, and
// which packs are already open (names only, spec 002 §8).
func systemPrompt(st promptState) string {
	var b strings.Builder
	if st.noTools {
		b.WriteString(bootstrapNoTools)
	} else {
		b.WriteString(bootstrap)
	}
	b.WriteByte('\n')
	b.WriteString(metadataHeader)
	if len(st.packs) == 0 {
		b.WriteString("(none attached)\n")
	}
	// Higher [knowledge] priority first; equal ones in attachment order.
	ordered := slices.Clone(st.packs)
	slices.SortStableFunc(ordered, func(x, y packMeta) int { return cmp.Compare(y.Priority, x.Priority) })
	for _, m := range ordered {
		writeMeta(&b, m)
	}
	writePrompts(&b, st.packs)
	if len(st.opened) > 0 {
		b.WriteString("\nDocs already opened in this conversation: ")
		b.WriteString(strings.Join(st.opened, ", "))
		b.WriteByte('\n')
	}
	if len(st.enabled) > 0 {
		b.WriteString("Tools enabled: ")
		b.WriteString(strings.Join(st.enabled, ", "))
		b.WriteByte('\n')
	}
	if st.agentPrompt != "" {
		b.WriteByte('\n')
		b.WriteString(strings.TrimRight(st.agentPrompt, "\n"))
		b.WriteByte('\n')
	}
	switch {
	case st.explicit != "" && st.injected != "":
		b.WriteString("\nThe person invoked the pack ")
		b.WriteString(st.explicit)
		b.WriteString(" for this message. Its instructions:\n<pack_docs pack_id=\"")
		b.WriteString(st.explicit)
		b.WriteString("\">\n")
		b.WriteString(st.injected)
		b.WriteString("\n</pack_docs>\n")
	case st.explicit != "":
		b.WriteString("\nThe person invoked the pack ")
		b.WriteString(st.explicit)
		b.WriteString(" for this message: call open_docs(\"")
		b.WriteString(st.explicit)
		b.WriteString("\") before you answer, unless its docs are already open.\n")
	}
	return b.String()
}

// bytesPerToken is EstimateTokens' rule: four bytes a token.
const bytesPerToken = 4

// EstimateTokens approximates the tokens a text costs: one per four bytes,
// rounded up. This is OpenAI's published rule of thumb for English; real
// tokenizers differ by model, so budgets built on it keep a margin.
func EstimateTokens(s string) int { return (len(s) + bytesPerToken - 1) / bytesPerToken }

// MetadataTokens estimates the tokens one pack adds to every request.
func MetadataTokens(id, description string, hasTools bool) int {
	var b strings.Builder
	writeMeta(&b, packMeta{ID: id, Name: id, Description: description, HasTools: hasTools})
	return EstimateTokens(b.String())
}
