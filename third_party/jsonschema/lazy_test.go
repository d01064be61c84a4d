package jsonschema

import (
	"strings"
	"sync"
	"testing"
)

// The packs patch: no draft's metaschema is compiled until a schema of that
// draft is compiled, and then only that draft's.

var drafts = []*Draft{Draft4, Draft6, Draft7, Draft2019, Draft2020}

func loaded() []int {
	var out []int
	for _, d := range drafts {
		if d.sch != nil {
			out = append(out, d.version)
		}
	}
	return out
}

func TestDraftsCompiledOnFirstUse(t *testing.T) {
	// Run first: the other tests load drafts.
	if got := loaded(); len(got) != 0 {
		t.Fatalf("got drafts %v compiled before any use, want none", got)
	}
	c := NewCompiler()
	if err := c.AddResource("mem:a.json", map[string]any{"$schema": "http://json-schema.org/draft-07/schema#", "type": "string"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Compile("mem:a.json"); err != nil {
		t.Fatal(err)
	}
	if got := loaded(); len(got) != 1 || got[0] != 7 {
		t.Errorf("got drafts %v compiled, want only 7", got)
	}
}

// TestInvalidSchemaRefusedPerDraft: the metaschema still checks every
// schema, whichever draft is compiled first, concurrently too (go test -race).
func TestInvalidSchemaRefusedPerDraft(t *testing.T) {
	var wg sync.WaitGroup
	for _, d := range drafts {
		for i := 0; i < 4; i++ {
			wg.Add(1)
			go func(d *Draft) {
				defer wg.Done()
				c := NewCompiler()
				c.DefaultDraft(d)
				url := "mem:" + strings.ReplaceAll(d.url, "/", "_")
				if err := c.AddResource(url, map[string]any{"type": 12}); err != nil {
					t.Error(err)
					return
				}
				_, err := c.Compile(url)
				if _, ok := err.(*SchemaValidationError); !ok {
					t.Errorf("draft %d: got %v, want a SchemaValidationError for type 12", d.version, err)
				}
				if err := c.AddResource(url+"ok", map[string]any{"type": "integer", "minimum": 1}); err != nil {
					t.Error(err)
					return
				}
				sch, err := c.Compile(url + "ok")
				if err != nil {
					t.Errorf("draft %d: %v", d.version, err)
					return
				}
				if sch.Validate(0) == nil || sch.Validate(1) != nil {
					t.Errorf("draft %d: minimum 1 does not hold", d.version)
				}
			}(d)
		}
	}
	wg.Wait()
	if got := loaded(); len(got) != len(drafts) {
		t.Errorf("got drafts %v compiled, want all", got)
	}
}
