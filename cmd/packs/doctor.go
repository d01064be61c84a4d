package main

import (
	"fmt"
	"os/exec"
	"strings"

	"github.com/spf13/cobra"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/hostfns/confine"
)

// doctorReport is what packs doctor finds.
type doctorReport struct {
	Confinement struct {
		confine.Support
		Mode string `json:"mode"`
	} `json:"confinement"`
	// Policy is the policy's [exec] confinement; Native says whether native
	// commands run here under it, and how.
	Policy string `json:"policy_confinement"`
	Native string `json:"native_commands"`
	Home   string `json:"home"`
	// Store is where the state is: "sqlite" (packs.db in the state
	// directory) or "postgres" (--store, shared by replicas).
	Store string `json:"store"`
	// Toolchains are the programs the authoring loop uses, found on PATH
	// ("" when missing).
	Toolchains map[string]string `json:"toolchains"`
}

func (c *cli) doctorCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "doctor [--json]",
		Short: "Say what this machine gives: native-command confinement, toolchains, store",
		Long: `doctor reports what this machine gives packs:

- the confinement of native commands (docs/abi.md §5): the kernel's Landlock
  ABI, seccomp, and whether user, network and PID namespaces can be made;
  the mode that follows ("full", "landlock+seccomp" or "none") and what
  native commands do under the policy's [exec] confinement;
- the toolchains packs init/build use (go, cargo, rustc, wat2wasm, wasm-opt);
- the state directory, and the store: sqlite (packs.db there) or postgres
  (--store, shared by replicas).

--json prints one JSON object with the same facts.

Exit status: 0.`,
		Args: nargs(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := c.open(cmd.Context())
			if err != nil {
				return err
			}
			defer a.Close()
			var r doctorReport
			sup := confine.Probe()
			r.Confinement.Support, r.Confinement.Mode = sup, string(sup.Mode())
			r.Policy = string(a.Policy.ExecConfinement())
			switch {
			case sup.Full():
				r.Native = "run confined: Landlock, seccomp, namespaces"
			case sup.Mode() != confine.ModeNone && a.Policy.ExecConfinement() == capability.ConfinementBestEffort:
				r.Native = "run under Landlock and seccomp only (policy best-effort): network denied by seccomp, no PID namespace"
			case a.Policy.ExecConfinement() == capability.ConfinementBestEffort:
				r.Native = "run UNCONFINED (policy best-effort): only the grant check, the environment and the limits hold"
			default:
				r.Native = "refused: this machine cannot confine them fully and the policy requires it"
			}
			r.Home = a.Home.Dir()
			r.Store = a.DB.Dialect().String()
			r.Toolchains = map[string]string{}
			for _, t := range []string{"go", "cargo", "rustc", "wat2wasm", "wasm-opt"} {
				p, _ := exec.LookPath(t)
				r.Toolchains[t] = p
			}
			if asJSON {
				return writeJSON(c.stdout, r)
			}
			fmt.Fprintf(c.stdout, "confinement: %s (Landlock ABI %d, seccomp %v, namespaces %v", sup.Mode(), sup.LandlockABI, sup.Seccomp, sup.Namespaces)
			if sup.NamespacesError != "" {
				fmt.Fprintf(c.stdout, ": %s", sup.NamespacesError)
			}
			fmt.Fprintf(c.stdout, ")\nnative commands: %s ([exec] confinement = %q)\nhome: %s\nstore: %s\n", r.Native, r.Policy, r.Home, r.Store)
			var have, missing []string
			for _, t := range []string{"go", "cargo", "rustc", "wat2wasm", "wasm-opt"} {
				if r.Toolchains[t] != "" {
					have = append(have, t)
				} else {
					missing = append(missing, t)
				}
			}
			fmt.Fprintf(c.stdout, "toolchains: %s", strings.Join(have, ", "))
			if len(missing) > 0 {
				fmt.Fprintf(c.stdout, " (missing: %s)", strings.Join(missing, ", "))
			}
			fmt.Fprintln(c.stdout)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	return cmd
}
