package web

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestVerifyWithoutTheKey: when the audit key file is gone, verification
// says the log cannot be vouched for (ok false, with the reason), instead
// of failing as a server error.
func TestVerifyWithoutTheKey(t *testing.T) {
	e := newEnv(t, envOptions{})
	var c chatJSON
	e.must(http.StatusCreated, "POST", "/v1/chats", map[string]any{}, &c)
	var v struct {
		OK       bool     `json:"ok"`
		KeyID    string   `json:"key_id"`
		Error    string   `json:"error"`
		Warnings []string `json:"warnings"`
	}
	e.must(http.StatusOK, "GET", "/v1/audit/verify", nil, &v)
	if !v.OK || v.Error != "" {
		t.Fatalf("verify with the key: %+v", v)
	}
	keys, _ := filepath.Glob(filepath.Join(e.app.Home.Dir(), "audit.key*"))
	if len(keys) == 0 {
		t.Skip("no audit key file in the state directory: nothing to remove")
	}
	for _, k := range keys {
		if err := os.Remove(k); err != nil {
			t.Fatal(err)
		}
	}
	v.OK, v.Error = true, ""
	e.must(http.StatusOK, "GET", "/v1/audit/verify", nil, &v)
	if v.OK || !strings.Contains(v.Error, "key") {
		t.Fatalf("verify without the key: %+v, want ok false and the reason", v)
	}
}
