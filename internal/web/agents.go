package web

import (
	"net/http"

	"github.com/packs-run/packs/internal/app"
)

// agentJSON is an agent in spec 003's shape.
type agentJSON = app.AgentJSON

func agentOut(a app.Agent) agentJSON { return a.JSON() }

// agentBody is the body of POST and PATCH /v1/agents: a missing field is
// left as it is (POST: empty).
type agentBody struct {
	Name         *string   `json:"name"`
	SystemPrompt *string   `json:"system_prompt"`
	Model        *string   `json:"model"`
	MaxTokens    *int      `json:"max_tokens"`
	Capabilities *[]string `json:"capabilities"`
}

func (b agentBody) change() app.AgentChange {
	c := app.AgentChange{Name: b.Name, SystemPrompt: b.SystemPrompt, Model: b.Model, MaxTokens: b.MaxTokens}
	if b.Capabilities != nil {
		c.Capabilities = orEmpty(*b.Capabilities)
	}
	return c
}

func (s *Server) listAgents(w http.ResponseWriter, r *http.Request) {
	list, err := s.cfg.App.Agents(r.Context())
	if err != nil {
		s.fail(w, err)
		return
	}
	items := make([]agentJSON, 0, len(list))
	for _, a := range list {
		items = append(items, agentOut(a))
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": items, "total": len(items)})
}

func (s *Server) createAgent(w http.ResponseWriter, r *http.Request) {
	var b agentBody
	if err := readJSON(w, r, &b); err != nil {
		s.fail(w, err)
		return
	}
	a, err := s.cfg.App.CreateAgent(r.Context(), b.change().WithMaxTokens(s.currentModel().Config.MaxTokens))
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, agentOut(a))
}

func (s *Server) getAgent(w http.ResponseWriter, r *http.Request) {
	a, err := s.cfg.App.Agent(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, agentOut(a))
}

func (s *Server) updateAgent(w http.ResponseWriter, r *http.Request) {
	var b agentBody
	if err := readJSON(w, r, &b); err != nil {
		s.fail(w, err)
		return
	}
	a, err := s.cfg.App.UpdateAgent(r.Context(), r.PathValue("id"), b.change())
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, agentOut(a))
}

func (s *Server) deleteAgent(w http.ResponseWriter, r *http.Request) {
	a, err := s.cfg.App.DeleteAgent(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, err)
		return
	}
	writeJSON(w, http.StatusOK, agentOut(a))
}
