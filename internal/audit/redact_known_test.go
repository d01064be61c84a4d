package audit

import (
	"strings"
	"testing"
)

type knownValues []string

func (k knownValues) MaskString(s string) string {
	for _, v := range k {
		s = strings.ReplaceAll(s, v, "[secret]")
	}
	return s
}

// TestRedactKnownSecrets: a value of the secret store is masked wherever
// it appears, even where no rule would call it a secret.
func TestRedactKnownSecrets(t *testing.T) {
	r := DefaultRedactor()
	r.Known = knownValues{"plainlooking123"}
	tests := []struct{ in, want string }{
		{`{"note":"id plainlooking123 here"}`, `{"note":"id [secret] here"}`},
		{`{"plainlooking123":1}`, `{"[secret]":1}`},
		{`["plainlooking123"]`, `["[secret]"]`},
		{`{"n":"other"}`, `{"n":"other"}`},
	}
	for _, tt := range tests {
		if got := string(r.JSON([]byte(tt.in))); got != tt.want {
			t.Errorf("JSON(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
	if got := r.Text("x plainlooking123"); got != "x [secret]" {
		t.Errorf("Text = %q", got)
	}
}
