package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/internal/app"
	"github.com/packs-run/packs/internal/builtin"
	"github.com/packs-run/packs/internal/dist"
	"github.com/packs-run/packs/packs"
	"github.com/packs-run/packs/runtime"
)

func (c *cli) addCommand() *cobra.Command {
	var grantFlag string
	var yes, asJSON, allowUnpinned bool
	var signerFiles []string
	var index string
	cmd := &cobra.Command{
		Use:   "add SOURCE [--grant all|none|CAP[=RES,...],...] [--yes] [--json] [--allow-unpinned]",
		Short: "Install a pack from a folder, a .tar.gz, a git repository or a URL",
		Long: `add installs a pack from one of these sources:

  PATH                                  a folder or a local .tar.gz/.tgz archive
  git+https://HOST/REPO[#REF][:SUBDIR]  a git repository (also git+file:///PATH)
  https://HOST/…/x.tar.gz#sha256=HEX    an archive, pinned by its digest
  oci://REGISTRY/REPO:TAG               a pack artifact (also @sha256:HEX), see packs publish
  NAME                                  a name in the pack index (--index or $PACKS_INDEX)
  builtin:NAME                          a built-in pack you removed, back with nothing granted

REF is a branch, a tag or a commit (default: the repository's HEAD); 4 to
40 hex digits always name a commit, never a branch or tag; SUBDIR
is the pack's folder inside the repository. The commit or digest fetched is
recorded in packs.lock. A URL without #sha256= is refused unless
--allow-unpinned says you accept whatever the server sends.

Only what the pack ships is installed: no .git folders and nothing the
pack's root .gitignore or .packignore excludes (a Rust target/, say).

An archive's SSH signature, ARCHIVE.sig beside it (or at its URL plus .sig;
see packs sign), is checked before it is opened: it must match, and its key
must be trusted, by the enterprise policy's [trust] signers or by --signer
KEY.pub. Naming a --signer requires a signature: an archive without one is
refused. The policy can require a signature per kind of source and block
signers. The signer is recorded in packs.lock.

Every source is fetched into a temporary folder first; add then validates
the pack (and refuses it when there are errors, when the enterprise
policy blocks it, or when it does not fit this machine: skill.toml's
[platform] os, arch and required_tools, and the packs its [dependencies]
name, installed in a version that fits), shows what the pack asks for, then
installs it atomically and records it in packs.lock. A tool that runs a
command skill.toml does not request under terminal_exec is refused too: no
grant could let it run. A NAME from an index must install a pack of that
name. packs update, packs bundle import and the web app install through the
same checks.

--grant decides which requested capabilities are granted: "all", "none", or
a comma-separated list in the syntax of packs grant, such as
"network,env_read" or "network=api.example.com,env_read" (only that host).
Without --grant, a person at a terminal is asked about each capability.
Capabilities the enterprise policy pre-approves are shown as such and not
asked about. --yes skips the questions (and grants only what --grant says):
it approves the install, never a capability. Without a terminal (stdin or
stderr is not one, as in scripts and CI) nobody can answer: pass --yes or
--grant, or add refuses (exit 2).

Compiling the pack's WebAssembly modules is reported on stderr as it goes.

--json prints one JSON object on stdout, and what the pack asks for goes to
stderr instead:

  {"name": "web-reader", "version": "0.1.0", "source": "file:///...",
   "integrity": "sha256:...", "tools": ["fetch", "html_to_markdown"],
   "requested": [{"capability": "network", "resources": ["docs.rs", ...],
                  "granted": true, "granted_resources": []}],
   "granted": ["network"], "pre_approved": [], "not_granted": []}

granted lists the capabilities the person granted, pre_approved those the
enterprise policy grants, not_granted the requested ones neither grants.`,
		Args: nargs(1, 1, "one SOURCE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			a, err := c.open(ctx)
			if err != nil {
				return err
			}
			defer a.Close()
			if name, ok := strings.CutPrefix(args[0], builtin.SourcePrefix); ok {
				// A built-in pack the person removed comes back, with
				// nothing granted.
				e, err := a.RestoreBuiltin(ctx, name)
				if err != nil {
					return err
				}
				fmt.Fprintf(c.stdout, "installed %s %s (%s, built in)\n", e.Name, e.Version, e.Integrity)
				return nil
			}
			if index == "" {
				index = c.getenv("PACKS_INDEX")
			}
			signers, err := readSigners(signerFiles)
			if err != nil {
				return err
			}
			shown := c.stdout
			if asJSON {
				shown = c.stderr
			}
			consent := app.ConsentFunc(func(_ context.Context, o app.Offer) ([]capability.UserGrant, error) {
				st := o.Staged
				if o.FromIndex != "" {
					fmt.Fprintf(c.stderr, "%s: %s (from the index %s)\n", args[0], o.FromIndex, index)
				}
				for _, f := range st.Findings {
					fmt.Fprintln(c.stderr, f.String())
				}
				grants, err := parseGrantFlag(grantFlag, o.Request)
				if err != nil {
					return nil, err
				}
				preRep, err := capability.Explain(st.Ref(), o.Request, nil, a.Policy, c.explainEnv(a))
				if err != nil {
					return nil, err
				}
				showRequest(shown, st, o.Request, o.PreApproved, preRep, a.Policy.Source())
				if !c.interactive && !yes && grantFlag == "" {
					return nil, usageError("add: nobody can answer here (no terminal), so %s was not installed: pass --yes to install it granting nothing, or --grant all|none|CAP,... to choose what it gets", st.Name())
				}
				if grantFlag == "" && c.interactive && !yes {
					if grants, err = c.askGrants(o.Request, o.PreApproved); err != nil {
						return nil, err
					}
				}
				if c.interactive && !yes {
					ok, err := c.ask(fmt.Sprintf("Install %s?", st.Name()), true)
					if err != nil {
						return nil, err
					}
					if !ok {
						return nil, fmt.Errorf("add: %w: you declined", app.ErrDeclined)
					}
				}
				return grants, nil
			})
			a.Installed = append(a.Installed, compileHook(a, c.stderr))
			res, err := a.Install(ctx, app.InstallRequest{Source: args[0], Index: index, Signers: signers,
				AllowUnpinned: allowUnpinned, Consent: consent, By: "packs add"})
			if err != nil {
				return c.installError("add", args[0], a, err, "")
			}
			e, pre := res.Entry, res.PreApproved
			var denied []capability.Name
			for _, n := range e.Requested() {
				if !e.Capabilities[n].Granted && !slices.Contains(pre, n) {
					denied = append(denied, n)
				}
			}
			if asJSON {
				res := addResult{packJSON: toJSON(app.InstalledPack{Entry: e, Status: app.StatusOK, Pack: res.Pack}),
					PreApproved: capStrings(pre), NotGranted: capStrings(denied)}
				return writeJSON(c.stdout, res)
			}
			fmt.Fprintf(c.stdout, "installed %s %s (%s)\n", e.Name, e.Version, e.Integrity)
			// What the grants hold, as packs capabilities says it: the
			// effective resources, not the capability's name alone.
			var granted []capability.Name
			var user []capability.UserGrant
			for _, n := range e.Requested() {
				if e.Capabilities[n].Granted {
					granted = append(granted, n)
					user = append(user, capability.UserGrant{Capability: n, Resources: e.Capabilities[n].Resources, Scope: capability.ScopePersistent})
				}
			}
			if len(granted) > 0 || len(pre) > 0 {
				ref := capability.PackRef{Name: e.Name, Digest: e.Integrity}
				got, err := capability.Explain(ref, res.Pack.Request(), user, a.Policy, c.explainEnv(a))
				if err != nil {
					return err
				}
				if len(granted) > 0 {
					fmt.Fprintf(c.stdout, "granted: %s\n", holdings(got, granted))
				}
				if len(pre) > 0 {
					fmt.Fprintf(c.stdout, "pre-approved by policy %s: %s\n", a.Policy.Source(), holdings(got, pre))
				}
			}
			if len(denied) > 0 {
				fmt.Fprintf(c.stdout, "not granted: %s (tools that need them are denied; grant with packs grant %s CAP)\n", capNames(denied), e.Name)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&grantFlag, "grant", "", `capabilities to grant: "all", "none" or CAP[=RES,...],... as in packs grant`)
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "install without asking (grants only what --grant says)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as one JSON object (see above)")
	cmd.Flags().BoolVar(&allowUnpinned, "allow-unpinned", false, "accept an https:// archive without #sha256= (its digest is still recorded)")
	cmd.Flags().StringArrayVar(&signerFiles, "signer", nil, "trust signatures by this SSH public key file (repeatable)")
	cmd.Flags().StringVar(&index, "index", "", "the pack index (a file or https URL) that resolves a NAME; default $PACKS_INDEX")
	return cmd
}

// readSigners reads the --signer files: SSH public keys the person trusts
// for this install.
func readSigners(files []string) ([]string, error) {
	var out []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, usageError("--signer: %v", err)
		}
		k, err := dist.NormalizeKey(string(b))
		if err != nil {
			return nil, usageError("--signer %s: not an SSH public key: give a .pub file", f)
		}
		out = append(out, k)
	}
	return out, nil
}

// installError says what a refusal of the installer means and what to do,
// with the exit status that means it; the findings of an invalid or
// misfit pack go to stderr first. stays, when set, says what stays
// installed (an update).
func (c *cli) installError(verb, what string, a *app.App, err error, stays string) error {
	if stays != "" {
		stays = ": " + stays
	}
	trim := func(err error) string {
		return strings.NewReplacer("app: ", "", "packs: ", "").Replace(err.Error())
	}
	var le *packs.LoadError
	var mf *app.MisfitError
	var be *app.BlockedError
	switch {
	case errors.As(err, &le):
		for _, f := range le.Findings {
			fmt.Fprintln(c.stderr, f.String())
		}
		errs, _ := count(le.Findings)
		return fmt.Errorf("%s: %s has %s: fix them (packs validate shows them) and run packs %s again%s", verb, what, plural(errs, "error"), verb, stays)
	case errors.As(err, &mf):
		for _, f := range mf.Findings {
			fmt.Fprintln(c.stderr, f.String())
		}
		errs, _ := count(mf.Findings)
		return fmt.Errorf("%s: %s does not fit this machine (%s): install what it needs, or use it on a machine it supports%s", verb, mf.Pack, plural(errs, "error"), stays)
	case errors.As(err, &be):
		return exitWith(exitDenied, fmt.Errorf("%s %s: blocked by policy %s: %s: ask the policy's administrator, or choose another pack%s",
			verb, be.Ref.Name, a.Policy.Source(), blockReason(a.Policy, be.Ref), stays))
	case errors.Is(err, dist.ErrUntrustedSigner):
		return exitWith(exitDenied, fmt.Errorf("%s: %s: if you trust that key, pass --signer KEY.pub, or ask the policy's administrator to add it to [trust] signers%s", verb, trim(err), stays))
	case errors.Is(err, dist.ErrSignerBlocked), errors.Is(err, dist.ErrSignatureRequired):
		return exitWith(exitDenied, fmt.Errorf("%s: %s (policy %s, or --signer)%s", verb, trim(err), a.Policy.Source(), stays))
	case errors.Is(err, dist.ErrSignature):
		return exitWith(exitDenied, fmt.Errorf("%s: %s: do not install it; get the archive and its .sig again from the author%s", verb, trim(err), stays))
	case errors.Is(err, app.ErrIndexName):
		return exitWith(exitDenied, fmt.Errorf("%s: %s", verb, trim(err)))
	case errors.Is(err, dist.ErrUnpinned):
		return usageError("%s: %s: add #sha256=HEX (the archive's digest, as packs pack prints it) to the URL, or pass --allow-unpinned", verb, trim(err))
	case errors.Is(err, app.ErrNoIndex):
		return usageError("%s: %s with --index or $PACKS_INDEX", verb, trim(err))
	case errors.Is(err, app.ErrExecNotRequested):
		return fmt.Errorf("%s: %s%s", verb, trim(err), stays)
	case errors.Is(err, app.ErrOtherPack):
		return fmt.Errorf("%s: %s", verb, trim(err))
	}
	return err
}

// addResult is packs add --json: the installed pack as list --json shows
// it, and how each requested capability ended up.
type addResult struct {
	packJSON
	PreApproved []string `json:"pre_approved"` // granted by the enterprise policy
	NotGranted  []string `json:"not_granted"`  // requested, granted by nobody
}

// compileHook is packs add's App.Installed hook: precompileHook's work, one
// module at a time, with progress on w. Compiling a large module (web-reader,
// a Go guest) takes seconds.
func compileHook(a *app.App, w io.Writer) func(context.Context, dist.LockEntry) error {
	return func(ctx context.Context, e dist.LockEntry) error {
		dir, err := a.Home.PackDir(e.Name)
		if err != nil {
			return err
		}
		p, err := packs.Load(dir, packs.LoadOptions{})
		if err != nil {
			return err
		}
		var modules []string
		byModule := map[string][]*packs.Tool{}
		for _, t := range p.Tools {
			if t.Run.Wasm == "" {
				continue
			}
			if byModule[t.Run.Wasm] == nil {
				modules = append(modules, t.Run.Wasm)
			}
			byModule[t.Run.Wasm] = append(byModule[t.Run.Wasm], t)
		}
		if len(modules) == 0 {
			return nil
		}
		rt, err := runtime.New(ctx, runtime.Config{CacheDir: a.Home.CacheDir(), Logger: a.Logger, PoolSize: -1})
		if err != nil {
			return err
		}
		defer rt.Close(context.WithoutCancel(ctx))
		for _, m := range modules {
			size := "?"
			if fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(m))); err == nil {
				size = byteSize(fi.Size())
			}
			fmt.Fprintf(w, "compiling %s (%s)…\n", m, size)
			start := time.Now()
			one := *p
			one.Tools = byModule[m]
			if err := rt.Precompile(ctx, &one); err != nil {
				a.Logger.Warn("packs add: installed, but a module does not compile: its tools will fail", "pack", e.Name, "err", err)
				continue
			}
			fmt.Fprintf(w, "compiled %s in %s\n", m, roundDuration(time.Since(start)))
		}
		return nil
	}
}

// byteSize renders n bytes as "812 B", "3.4 kB" or "3.4 MB".
func byteSize(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1000*1000:
		return fmt.Sprintf("%.1f kB", float64(n)/1000)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/1000/1000)
}

// roundDuration keeps three significant digits or so: 7.12s, 312ms, 45µs.
func roundDuration(d time.Duration) string {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(time.Millisecond).String()
	}
	return d.Round(time.Microsecond).String()
}

// capStrings is capability names as strings, never nil.
func capStrings(ns []capability.Name) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = string(n)
	}
	return out
}

// blockReason says which list of the policy blocks ref: its name or its
// content digest.
func blockReason(pol *capability.Policy, ref capability.PackRef) string {
	if pol.Blocked(capability.PackRef{Name: ref.Name}) != nil {
		return fmt.Sprintf("pack %q is listed in [packs] blocked", ref.Name)
	}
	return fmt.Sprintf("its content %s is listed in [packs] blocked_digests", ref.Digest)
}

// parseGrantFlag reads --grant with capability.ParseGrantList, the parser
// of packs grant, into the persistent grants made at install. An empty flag
// grants nothing (a person at a terminal is asked instead).
func parseGrantFlag(flag string, req capability.Request) ([]capability.UserGrant, error) {
	grants, err := capability.ParseGrantList(flag, req, capability.ScopePersistent)
	if err != nil {
		return nil, usageError("add: --grant: %s (the pack asks for: %s)", strings.TrimPrefix(err.Error(), "capability: "), orNone(capNames(req.Names())))
	}
	for _, u := range grants {
		if u.Scope != capability.ScopePersistent {
			return nil, usageError("add: --grant %s=%s: a grant made at install lasts until revoked; grant for one chat with packs grant --chat", u.Capability, u.Scope)
		}
	}
	return grants, nil
}

// askGrants asks the person at the terminal about each requested
// capability the policy does not pre-approve.
func (c *cli) askGrants(req capability.Request, pre []capability.Name) ([]capability.UserGrant, error) {
	var out []capability.UserGrant
	for _, n := range req.Names() {
		if slices.Contains(pre, n) {
			continue
		}
		ok, err := c.ask(fmt.Sprintf("Grant %s (%s)?", n, strings.Join(req.Resources(n), ", ")), false)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, capability.UserGrant{Capability: n, Scope: capability.ScopePersistent})
		}
	}
	return out, nil
}

// holdings renders what each of ns holds in rep: "network docs.rs; env_read A_*".
func holdings(rep capability.Report, ns []capability.Name) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		cr, _ := rep.Of(n)
		s[i] = string(n) + " " + cr.Holds()
	}
	return strings.Join(s, "; ")
}

// showRequest prints the pack and what it asks for.
// pre are the capabilities the policy (from source) pre-approves.
//
// pre are the capabilities the policy (from source) pre-approves; preRep
// says what they hold.
func showRequest(w io.Writer, st *dist.Staged, req capability.Request, pre []capability.Name, preRep capability.Report, source string) {
	p := st.Pack
	version := ""
	if p.Manifest != nil && p.Manifest.Version != "" {
		version = " " + p.Manifest.Version
	}
	fmt.Fprintf(w, "%s%s from %s\n", st.Name(), version, st.Source)
	if st.Resolved != "" {
		fmt.Fprintf(w, "resolved: %s\n", st.Resolved)
	}
	if st.Signer != "" {
		fmt.Fprintf(w, "signed by: %s\n", st.Signer)
	}
	if len(p.Tools) > 0 {
		names := make([]string, len(p.Tools))
		for i, t := range p.Tools {
			names[i] = t.Name
		}
		fmt.Fprintf(w, "tools: %s\n", strings.Join(names, ", "))
	}
	if len(req.Names()) == 0 {
		fmt.Fprintln(w, "it asks for no capabilities beyond the defaults (its own folder read-only, the chat workspace)")
		return
	}
	fmt.Fprintln(w, "it asks for:")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, n := range req.Names() {
		note := ""
		if slices.Contains(pre, n) {
			cr, _ := preRep.Of(n)
			note = "\tgranted: " + cr.Holds() + " (pre-approved by policy " + source + ")"
		}
		fmt.Fprintf(tw, "  %s\t%s%s\n", n, strings.Join(req.Resources(n), ", "), note)
	}
	if len(req.TerminalExec.Blocked) > 0 {
		fmt.Fprintf(tw, "  (blocked commands)\t%s\n", strings.Join(req.TerminalExec.Blocked, ", "))
	}
	tw.Flush()
}

// capNames renders capability names as "a, b".
func capNames(ns []capability.Name) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = string(n)
	}
	return strings.Join(s, ", ")
}

func orNone(s string) string {
	if s == "" {
		return "nothing"
	}
	return s
}
