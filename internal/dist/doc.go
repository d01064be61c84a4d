// Package dist distributes packs: the state directory (Home: packs/,
// packs.lock, cache/, workspaces/), staging and committing an install,
// the lockfile, sources (folders, archives, git, HTTPS, OCI, an index),
// archives, bundles and SSH signatures. It reads packs through package
// packs (the format) and never the reverse. In this module its commit is
// reached only through the installer in internal/app (internal/gatecheck
// proves it); RATIONALE.md says why it is internal.
package dist
