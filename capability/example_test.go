package capability_test

import (
	"errors"
	"fmt"

	"github.com/packs-run/packs/capability"
)

// A pack asks for two hosts and a variable; the person grants one host and
// nothing else. The grant then answers each request of a call, and a
// denial says which layer refused and why.
func Example() {
	req := capability.Request{
		Network: []string{"api.example.com", "uploads.example.com"},
		EnvRead: []string{"EXAMPLE_TOKEN"},
	}
	user := []capability.UserGrant{{
		Capability: capability.Network,
		Resources:  []string{"api.example.com"},
		Scope:      capability.ScopePersistent,
	}}
	g, err := capability.Resolve(capability.PackRef{Name: "weather"}, req, user, nil, capability.Env{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, d := range []capability.Decision{
		g.Host("api.example.com:443"),
		g.Host("uploads.example.com:443"),
		g.Env("EXAMPLE_TOKEN"),
	} {
		if d.Allowed() {
			fmt.Printf("%s %s: allowed\n", d.Capability(), d.Resource())
			continue
		}
		fmt.Printf("%s %s: denied by the %s layer: %s\n", d.Capability(), d.Resource(), d.Layer(), d.Reason())
	}
	// Output:
	// network api.example.com:443: allowed
	// network uploads.example.com:443: denied by the user layer: the person did not grant this network resource
	// env_read EXAMPLE_TOKEN: denied by the user layer: the person has not granted env_read
}

// The enterprise policy always wins: a ceiling narrows what a person may
// grant, and a blocked pack gets no grant at all.
func ExampleParsePolicy() {
	pol, err := capability.ParsePolicy("policy.toml", []byte(`
[packs]
blocked = ["evil-pack"]

[ceilings]
network = ["*.corp.example"]
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	req := capability.Request{Network: []string{"api.corp.example", "pastebin.com"}}
	everything := []capability.UserGrant{{Capability: capability.Network, Scope: capability.ScopePersistent}}

	g, _ := capability.Resolve(capability.PackRef{Name: "reports"}, req, everything, pol, capability.Env{})
	fmt.Println("api.corp.example:", g.Host("api.corp.example:443").Allowed())
	fmt.Println("pastebin.com:", g.Host("pastebin.com:443").Allowed(), "by", g.Host("pastebin.com:443").Layer())

	_, err = capability.Resolve(capability.PackRef{Name: "evil-pack"}, req, everything, pol, capability.Env{})
	fmt.Println("evil-pack blocked:", errors.Is(err, capability.ErrBlocked))
	// Output:
	// api.corp.example: true
	// pastebin.com: false by policy
	// evil-pack blocked: true
}
