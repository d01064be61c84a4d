package main

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/packs-run/packs/internal/app"
	"github.com/packs-run/packs/internal/builtin"
	"github.com/packs-run/packs/internal/dist"
	"github.com/packs-run/packs/packs"
)

// packFlags are the flags whose values name packs.
var packFlags = []string{"attach", "capability", "pack"}

// packSuggestion is the "did you mean" of a command that failed because a
// pack it was given is not installed (dist.ErrNotInstalled, app.ErrNotFound,
// app.ErrUnknownCapability): the installed and built-in packs named most
// like the first name among the command's pack flags and arguments that
// is no installed or built-in pack and has such neighbours. It is empty for any other error,
// or when no name is close. Every command that takes a pack name gets it
// from cli.run, so none needs its own.
func (c *cli) packSuggestion(ctx context.Context, cmd *cobra.Command, err error) string {
	if cmd == nil || !(errors.Is(err, dist.ErrNotInstalled) || errors.Is(err, app.ErrNotFound) || errors.Is(err, app.ErrUnknownCapability)) {
		return ""
	}
	known := c.knownPackNames(ctx)
	for _, name := range packNameArgs(cmd) {
		if !packs.ValidName(name) || slices.Contains(known, name) {
			continue
		}
		if sug := suggest(name, known); len(sug) > 0 {
			return "; did you mean " + strings.Join(sug, " or ") + "?"
		}
	}
	return ""
}

// packNameArgs are what cmd was given that may name a pack: the values of
// its pack flags, then its arguments.
func packNameArgs(cmd *cobra.Command) []string {
	var out []string
	for _, name := range packFlags {
		f := cmd.Flags().Lookup(name)
		if f == nil || !f.Changed {
			continue
		}
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			out = append(out, sv.GetSlice()...)
		} else {
			out = append(out, f.Value.String())
		}
	}
	return append(out, cmd.Flags().Args()...)
}

// knownPackNames are the installed packs' names and the built-ins'. It
// creates nothing: without a state directory only the built-ins are known.
func (c *cli) knownPackNames(ctx context.Context) []string {
	names := builtin.Names()
	a, err := c.openExisting(ctx)
	if err != nil || a == nil {
		return names
	}
	defer a.Close()
	if l, err := a.Home.ReadLock(); err == nil {
		for _, e := range l.Packs {
			names = append(names, e.Name)
		}
	}
	return names
}

// suggest returns the names in known closest to name, at most three: those
// at an edit distance of at most 2 (or a third of name's length, when
// larger), and those that start with name or that name starts with (at
// least three characters), nearest first.
func suggest(name string, known []string) []string {
	type cand struct {
		name string
		d    int
	}
	limit := max(2, len(name)/3)
	var cs []cand
	for _, k := range known {
		d := editDistance(strings.ToLower(name), strings.ToLower(k))
		prefix := len(name) >= 3 && (strings.HasPrefix(k, name) || strings.HasPrefix(name, k) && len(k) >= 3)
		if d <= limit || prefix {
			cs = append(cs, cand{k, d})
		}
	}
	slices.SortFunc(cs, func(a, b cand) int { return cmp.Or(cmp.Compare(a.d, b.d), strings.Compare(a.name, b.name)) })
	cs = slices.CompactFunc(cs, func(a, b cand) bool { return a.name == b.name })
	var out []string
	for _, c := range cs[:min(3, len(cs))] {
		out = append(out, c.name)
	}
	return out
}

// editDistance is the Levenshtein distance between a and b, by byte.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
