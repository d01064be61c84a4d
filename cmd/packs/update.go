package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/app"
	"github.com/packs-run/packs/internal/builtin"
	"github.com/packs-run/packs/internal/dist"
)

func (c *cli) updateCommand() *cobra.Command {
	var yes, allowUnpinned, asJSON bool
	var signerFiles []string
	cmd := &cobra.Command{
		Use:   "update [NAME] [--yes] [--signer KEY.pub] [--allow-unpinned] [--json]",
		Short: "Fetch installed packs again from their sources and install what changed",
		Long: `update fetches the pack NAME (or every installed pack) again from the source
recorded in packs.lock, through the same checks as packs add (validation,
limits, digests, signatures and the enterprise policy). A pack whose content
did not change is left alone. Otherwise update shows the version, the files
added, removed and changed, and the capability diff: resources the new
version asks for (+) and no longer asks for (-).

Grants never widen silently. The person's persistent grants carry over only
as far as they went before: a grant of a whole capability is pinned to the
resources the old version asked for, and resources the new version no
longer asks for are dropped. When the new version asks for more, a person
at a terminal is asked to accept the update and then about each new
request; declining keeps the old version installed and running. Without a
terminal such an update is refused unless --yes, which installs it with the
carried grants only (the new requests stay ungranted; grant them with packs
grant). A git source named by a branch follows the branch; a tag, a commit
or a pinned URL gives the same content until the source changes. A pack
installed signed must stay signed: an unsigned new version is refused, and
the key that signed the installed version is trusted for the new one.

--json prints one JSON array, an object per pack: name, from and to
(versions), status (updated, up_to_date, declined, built_in or failed),
integrity, files (added, removed, changed), capabilities (the diff lines),
dropped, not_granted and error. What the person is shown goes to stderr then.`,
		Args: nargs(0, 1, "at most one pack NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			a, err := c.open(ctx)
			if err != nil {
				return err
			}
			defer a.Close()
			var entries []dist.LockEntry
			if len(args) == 1 {
				e, err := a.Home.Entry(args[0])
				if err != nil {
					return err
				}
				entries = append(entries, e)
			} else {
				l, err := a.Home.ReadLock()
				if err != nil {
					return err
				}
				entries = l.Packs
			}
			var (
				errs    []error
				results = []updateResult{}
			)
			for _, e := range entries {
				r := updateResult{Name: e.Name, From: e.Version, Files: updateFiles{[]string{}, []string{}, []string{}}, Capabilities: []string{}, Dropped: []string{}, NotGranted: []string{}}
				err := c.updateOne(ctx, a, e, yes, allowUnpinned, signerFiles, asJSON, &r)
				if err != nil {
					r.Status, r.Error = "failed", strings.TrimPrefix(err.Error(), "packs: ")
				}
				results = append(results, r)
				if err != nil {
					if len(entries) == 1 {
						if !asJSON {
							return err
						}
						errs = append(errs, err)
						continue
					}
					fmt.Fprintf(c.stderr, "packs: update %s: %v\n", e.Name, strings.TrimPrefix(err.Error(), "packs: "))
					errs = append(errs, err)
				}
			}
			if asJSON {
				if err := writeJSON(c.stdout, results); err != nil {
					return err
				}
				switch {
				case len(errs) == 1 && len(entries) == 1:
					return errs[0] // its own exit code; the JSON says the rest
				case len(errs) > 0:
					return fmt.Errorf("update: %s failed (see above and the JSON)", plural(len(errs), "pack"))
				}
				return nil
			}
			if len(errs) > 0 {
				return fmt.Errorf("update: %s failed (see above); the others are up to date", plural(len(errs), "pack"))
			}
			return nil
		},
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "update without asking; new requests stay ungranted")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the outcome for each pack as JSON")
	cmd.Flags().BoolVar(&allowUnpinned, "allow-unpinned", false, "accept an https:// archive without #sha256=")
	cmd.Flags().StringArrayVar(&signerFiles, "signer", nil, "trust signatures by this SSH public key file (repeatable)")
	return cmd
}

// updateResult is one pack's outcome in packs update --json.
type updateResult struct {
	Name         string      `json:"name"`
	From         string      `json:"from"`
	To           string      `json:"to"`
	Status       string      `json:"status"` // updated, up_to_date, declined, built_in, failed
	Integrity    string      `json:"integrity,omitempty"`
	Files        updateFiles `json:"files"`
	Capabilities []string    `json:"capabilities"` // the request's diff, as the text shows it
	Dropped      []string    `json:"dropped"`
	NotGranted   []string    `json:"not_granted"`
	Error        string      `json:"error,omitempty"`
}

type updateFiles struct {
	Added   []string `json:"added"`
	Removed []string `json:"removed"`
	Changed []string `json:"changed"`
}

// updateOne fetches e's source again and installs it when it changed, with
// the person's consent when it asks for more. It fills r; the text goes to
// stdout, or to stderr when stdout is for the JSON.
func (c *cli) updateOne(ctx context.Context, a *app.App, e dist.LockEntry, yes, allowUnpinned bool, signerFiles []string, asJSON bool, r *updateResult) error {
	w := c.stdout
	if asJSON {
		w = c.stderr
	}
	if builtin.IsSource(e.Source) {
		// A built-in comes with the binary: bring it to this binary's
		// version (a no-op when it is).
		if err := a.EnsureBuiltins(ctx); err != nil {
			return err
		}
		fmt.Fprintf(w, "%s is built in: it is the version this packs binary carries\n", e.Name)
		r.Status = "built_in"
		return nil
	}
	signers, err := readSigners(signerFiles)
	if err != nil {
		return err
	}
	stays := fmt.Sprintf("%s %s stays installed", e.Name, orDash(e.Version))
	consent := app.ConsentFunc(func(ctx context.Context, o app.Offer) ([]capability.UserGrant, error) {
		st, diff, grants := o.Staged, o.Diff, o.Carried
		dir, err := a.Home.PackDir(e.Name)
		if err != nil {
			return nil, err
		}
		files, err := dist.DiffTrees(dir, st.Pack.Dir)
		if err != nil {
			return nil, err
		}
		newVersion := ""
		if st.Pack.Manifest != nil {
			newVersion = st.Pack.Manifest.Version
		}
		fmt.Fprintf(w, "%s %s → %s", e.Name, orDash(e.Version), orDash(newVersion))
		if e.Resolved != "" || st.Resolved != "" {
			fmt.Fprintf(w, " (%s → %s)", orDash(e.Resolved), orDash(st.Resolved))
		}
		fmt.Fprintln(w)
		r.To = newVersion
		r.Files = updateFiles{orEmpty(files.Added), orEmpty(files.Removed), orEmpty(files.Changed)}
		r.Capabilities = append(r.Capabilities, diff.Lines()...)
		fmt.Fprintf(w, "files: %d added, %d removed, %d changed\n", len(files.Added), len(files.Removed), len(files.Changed))
		for _, l := range [][2]any{{"+", files.Added}, {"-", files.Removed}, {"~", files.Changed}} {
			for _, f := range l[1].([]string) {
				fmt.Fprintf(w, "  %s %s\n", l[0], f)
			}
		}
		if lines := diff.Lines(); len(lines) > 0 {
			fmt.Fprintln(w, "capabilities:")
			for _, l := range lines {
				fmt.Fprintln(w, "  "+l)
			}
		} else {
			fmt.Fprintln(w, "capabilities: unchanged")
		}
		switch {
		case diff.Widened() && !c.interactive && !yes:
			return nil, usageError("update: %s %s asks for more than %s (see above) and nobody can answer here: %s; run packs update %s at a terminal, or pass --yes to update without granting the new requests",
				e.Name, orDash(newVersion), orDash(e.Version), stays, e.Name)
		case c.interactive && !yes:
			q := fmt.Sprintf("Update %s to %s?", e.Name, orDash(newVersion))
			if diff.Widened() {
				q = fmt.Sprintf("Update %s to %s? It asks for more (above).", e.Name, orDash(newVersion))
			}
			ok, err := c.ask(q, !diff.Widened())
			if err != nil {
				return nil, err
			}
			if !ok {
				return nil, fmt.Errorf("update: %w: you declined the update", app.ErrDeclined)
			}
			for _, n := range capability.All() {
				added, ok := diff.Added[n]
				if !ok || slices.Contains(o.PreApproved, n) {
					continue
				}
				yes, err := c.ask(fmt.Sprintf("Grant %s (new: %s)?", n, orNone(strings.Join(added, ", "))), false)
				if err != nil {
					return nil, err
				}
				if yes {
					grants = o.Widen(grants, n)
				}
			}
		}
		return grants, nil
	})
	a.Installed = append(a.Installed[:len(a.Installed):len(a.Installed)], compileHook(a, c.stderr))
	res, err := a.Update(ctx, e.Name, app.InstallRequest{Signers: signers, AllowUnpinned: allowUnpinned, Consent: consent, By: "packs update"})
	switch {
	case errors.Is(err, app.ErrDeclined):
		fmt.Fprintf(w, "kept %s %s: you declined the update\n", e.Name, orDash(e.Version))
		r.Status = "declined"
		return nil
	case err != nil:
		return c.installError("update", e.Name, a, err, stays)
	case res.UpToDate:
		fmt.Fprintf(w, "%s %s is up to date\n", e.Name, e.Version)
		r.Status, r.To, r.Integrity = "up_to_date", e.Version, e.Integrity
		return nil
	}
	ne := res.Entry
	r.Status, r.To, r.Integrity = "updated", ne.Version, ne.Integrity
	for _, n := range res.Dropped {
		r.Dropped = append(r.Dropped, string(n))
	}
	fmt.Fprintf(w, "updated %s %s → %s (%s)\n", ne.Name, orDash(e.Version), orDash(ne.Version), ne.Integrity)
	if len(res.Dropped) > 0 {
		fmt.Fprintf(w, "grants dropped (no longer asked for): %s\n", capNames(res.Dropped))
	}
	diff := res.Diff
	var notGranted []string
	for _, n := range capability.All() {
		added, ok := diff.Added[n]
		if !ok || slices.Contains(res.PreApproved, n) {
			continue
		}
		got := ne.Capabilities[n]
		for _, r := range added {
			if !got.Granted || len(got.Resources) > 0 && !slices.Contains(got.Resources, r) {
				notGranted = append(notGranted, string(n)+" "+r)
			}
		}
		if len(added) == 0 && !got.Granted {
			notGranted = append(notGranted, string(n))
		}
	}
	r.NotGranted = append(r.NotGranted, notGranted...)
	if len(notGranted) > 0 {
		fmt.Fprintf(w, "new requests not granted: %s (grant with packs grant %s CAP)\n", strings.Join(notGranted, ", "), ne.Name)
	}
	return nil
}

// orEmpty is l, or an empty list for JSON's [] instead of null.
func orEmpty(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
