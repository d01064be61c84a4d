package packs

import (
	"slices"
	"testing"

	"github.com/packs-run/packs/capability"
)

const secretsManifest = `[capabilities]
network = ["api.github.com", "127.0.0.1:8080"]
secrets_access = ["GITHUB_TOKEN", { name = "NPM_TOKEN", reveal = true }]

[[secrets.inject]]
name = "GITHUB_TOKEN"
host = "api.github.com"
header = "Authorization"
value = "Bearer {{secret.GITHUB_TOKEN}}"

[[secrets.inject]]
name = "NPM_TOKEN"
host = "127.0.0.1:8080"
query = "key"
`

func TestManifestSecrets(t *testing.T) {
	m, fs := parseM(secretsManifest)
	if len(fs) != 0 || m == nil {
		t.Fatalf("findings %v", fs)
	}
	r := m.Capabilities
	if got, want := r.SecretsAccess, []string{"GITHUB_TOKEN", "reveal:NPM_TOKEN"}; !slices.Equal(got, want) {
		t.Errorf("secrets_access = %v, want %v", got, want)
	}
	want := []capability.SecretInjection{
		{Name: "GITHUB_TOKEN", Host: "api.github.com", Header: "Authorization", Value: "Bearer {{secret.GITHUB_TOKEN}}"},
		{Name: "NPM_TOKEN", Host: "127.0.0.1:8080", Query: "key"},
	}
	if !slices.Equal(r.SecretsInject, want) {
		t.Errorf("inject = %+v, want %+v", r.SecretsInject, want)
	}
	if err := r.Validate(); err != nil {
		t.Errorf("the converted request must validate: %v", err)
	}
}

// TestManifestSecretsFindings: each bad secret entry or binding is one
// finding at its own line.
func TestManifestSecretsFindings(t *testing.T) {
	const head = "[capabilities]\nnetwork = [\"api.github.com\"]\nsecrets_access = [\"T\"]\n"
	cases := []struct {
		name, doc string
		want      []string
	}{
		{"reveal not bool", "[capabilities]\nsecrets_access = [{ name = \"T\", reveal = \"yes\" }]\n", []string{"error:toml-type@2"}},
		{"table without name", "[capabilities]\nsecrets_access = [\n  \"A\",\n  { reveal = true },\n]\n", []string{"error:toml-type@4"}},
		{"unknown key in entry", "[capabilities]\nsecrets_access = [{ name = \"T\", show = true }]\n", []string{"error:toml-unknown-key@2"}},
		{"bad name", "[capabilities]\nsecrets_access = [\"A B\"]\n", []string{"error:capability-pattern@2"}},
		{"unknown inject key", head + "[[secrets.inject]]\nname = \"T\"\nhost = \"api.github.com\"\nheader = \"X\"\nport = 1\n", []string{"error:toml-unknown-key@8"}},
		{"host outside network", head + "[[secrets.inject]]\nname = \"T\"\nhost = \"api.github.com\"\nheader = \"X\"\n[[secrets.inject]]\nname = \"T\"\nhost = \"evil.example\"\nheader = \"X\"\n", []string{"error:secrets-inject@8"}},
		{"unrequested secret", head + "[[secrets.inject]]\nname = \"U\"\nhost = \"api.github.com\"\nheader = \"X\"\n", []string{"error:secrets-inject@4"}},
		{"header and query", head + "[[secrets.inject]]\nname = \"T\"\nhost = \"api.github.com\"\nheader = \"X\"\nquery = \"k\"\n", []string{"error:secrets-inject@4"}},
		{"no placeholder", head + "[[secrets.inject]]\nname = \"T\"\nhost = \"api.github.com\"\nheader = \"X\"\nvalue = \"Bearer\"\n", []string{"error:secrets-inject@4"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, got := parseM(tc.doc)
			if !slices.Equal(got, tc.want) {
				t.Errorf("findings = %v, want %v", got, tc.want)
			}
			if m != nil && len(got) == 0 {
				t.Errorf("no findings")
			}
		})
	}
}
