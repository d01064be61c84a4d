package dist

import (
	"path/filepath"

	"github.com/packs-run/packs/packs"
)

// InstalledIn lists the packs installed in the state directory home, with
// their ids, for packs.Host.Installed. A home without packs.lock has none; it is
// never created.
func InstalledIn(home string) ([]packs.Installed, error) {
	l, err := ReadLock(filepath.Join(home, lockFile))
	if err != nil {
		return nil, err
	}
	out := make([]packs.Installed, 0, len(l.Packs))
	for _, e := range l.Packs {
		in := packs.Installed{Name: e.Name, Version: e.Version}
		dir := filepath.Join(home, packsDir, e.Name)
		in.ID = packs.ManifestID(dir)
		out = append(out, in)
	}
	return out, nil
}
