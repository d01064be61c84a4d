package dist

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/pelletier/go-toml/v2"

	"github.com/packs-run/packs/capability"
	"github.com/packs-run/packs/packs"
)

// LockVersion is the lockfile format this package reads and writes.
const LockVersion = 1

// ErrLockInvalid is wrapped by every error about a packs.lock that cannot be
// read: broken TOML, an unknown key, a missing or malformed field. The
// concrete error is a *LockError.
var ErrLockInvalid = errors.New("packs: invalid lockfile")

// LockError says what is wrong with a lockfile and where.
type LockError struct {
	File    string
	Line    int // 1-based; 0 when the problem is the file as a whole
	Rule    string
	Message string
}

func (e *LockError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("packs: %s:%d: %s: %s", e.File, e.Line, e.Rule, e.Message)
	}
	return fmt.Sprintf("packs: %s: %s: %s", e.File, e.Rule, e.Message)
}

func (e *LockError) Unwrap() error { return ErrLockInvalid }

// Lockfile is packs.lock (spec 001's lockfile, with "packs" for "skills"):
//
//	version = 1
//
//	[[packs]]
//	name = "weather"
//	version = "0.3.0"
//	source = "file:///home/me/packs/weather"
//	integrity = "sha256:…"
//	installed = "2026-01-02T10:00:00.123456789Z"
//
//	[packs.capabilities]
//	network = { granted = true, resources = ["api.weather.example"] }
//	env_read = { granted = false, resources = [] }
//
// Every capability the pack asks for is listed, granted or not, so the file
// shows which capabilities were requested and what the person said yes to.
// The capabilities mirror the person's persistent grants in packs.db (see
// Home.SetCapabilities); they are not covered by the integrity digest, which
// covers the pack's files only.
type Lockfile struct {
	Packs []LockEntry // sorted by name
}

// LockEntry is one installed pack.
type LockEntry struct {
	Name         string
	Version      string // from skill.toml; "" when the pack has none
	Source       string // where it was installed from, e.g. "file:///abs/dir"
	Integrity    string // Digest of the installed folder
	Installed    time.Time
	Capabilities map[capability.Name]LockCapability
	// Resolved pins what the source named when it was fetched: "git:" and
	// the commit for a git source, the archive's "sha256:…" for a URL; ""
	// for a local folder or an entry written before it existed.
	Resolved string
	// Signer is the public key ("ssh-ed25519 AAAA…") whose signature over
	// the pack archive was verified at install; "" when unsigned.
	Signer string
}

// Ref is how grants, policy and approvals name the installed pack: its name,
// its integrity and its signer.
func (e LockEntry) Ref() capability.PackRef {
	return capability.PackRef{Name: e.Name, Digest: e.Integrity, Signer: e.Signer}
}

// LockCapability is one requested capability, whether it was granted and
// the resources granted under it (spec 001 writes terminal_exec = { granted
// = true, commands = ["aws", "eksctl"] }, a subset of what the skill asked
// for). Resources are empty when the capability is not granted; what the
// pack asks for is in its skill.toml, which the integrity digest covers.
// It is capability.LockCapability, so capability.ToLock builds it.
type LockCapability = capability.LockCapability

// Granted lists the granted capabilities in the order of capability.All().
func (e LockEntry) Granted() []capability.Name {
	var out []capability.Name
	for _, n := range capability.All() {
		if e.Capabilities[n].Granted {
			out = append(out, n)
		}
	}
	return out
}

// Requested lists the requested capabilities in the order of capability.All().
func (e LockEntry) Requested() []capability.Name {
	var out []capability.Name
	for _, n := range capability.All() {
		if _, ok := e.Capabilities[n]; ok {
			out = append(out, n)
		}
	}
	return out
}

// equal reports whether two entries are the same record.
func (e LockEntry) equal(o LockEntry) bool {
	if e.Name != o.Name || e.Version != o.Version || e.Source != o.Source ||
		e.Integrity != o.Integrity || !e.Installed.Equal(o.Installed) || len(e.Capabilities) != len(o.Capabilities) ||
		e.Resolved != o.Resolved || e.Signer != o.Signer {
		return false
	}
	for n, c := range e.Capabilities {
		oc, ok := o.Capabilities[n]
		if !ok || c.Granted != oc.Granted || !slices.Equal(c.Resources, oc.Resources) {
			return false
		}
	}
	return true
}

// Entry returns the entry named name.
func (l *Lockfile) Entry(name string) (LockEntry, bool) {
	i, ok := l.find(name)
	if !ok {
		return LockEntry{}, false
	}
	return l.Packs[i], true
}

func (l *Lockfile) find(name string) (int, bool) {
	return slices.BinarySearchFunc(l.Packs, name, func(e LockEntry, n string) int { return strings.Compare(e.Name, n) })
}

// put adds e, replacing an entry of the same name.
func (l *Lockfile) put(e LockEntry) {
	i, ok := l.find(e.Name)
	if ok {
		l.Packs[i] = e
		return
	}
	l.Packs = slices.Insert(l.Packs, i, e)
}

// remove deletes the entry named name, if any.
func (l *Lockfile) remove(name string) {
	if i, ok := l.find(name); ok {
		l.Packs = slices.Delete(l.Packs, i, i+1)
	}
}

// ReadLock reads the lockfile at path. A file that does not exist is an
// empty lockfile. Anything else that is not exactly the format above is a
// *LockError naming the line and what to fix.
func ReadLock(path string) (*Lockfile, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return &Lockfile{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("packs: read lockfile: %w", err)
	}
	return ParseLock(path, data)
}

// ReadLockEntry returns the entry named name from the lockfile at path,
// and false when there is none. It costs what one entry costs, not what the
// file holds: in a lockfile in the canonical form (Marshal's: no multi-line
// strings, so a line "[[packs]]" is always an entry's header) it parses the
// version and the one entry whose name line matches. Anything else (no such
// line, two of them, a fragment that does not parse) falls back to
// ParseLock of the whole file, which reports errors with their true lines.
// Entries other than name are not checked: ReadLock does that.
func ReadLockEntry(path, name string) (LockEntry, bool, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return LockEntry{}, false, nil
	}
	if err != nil {
		return LockEntry{}, false, fmt.Errorf("packs: read lockfile: %w", err)
	}
	if frag, ok := lockFragment(data, name); ok {
		if l, err := ParseLock(path, frag); err == nil {
			if e, ok := l.Entry(name); ok {
				return e, true, nil
			}
		}
	}
	l, err := ParseLock(path, data)
	if err != nil {
		return LockEntry{}, false, err
	}
	e, ok := l.Entry(name)
	return e, ok, nil
}

// lockFragment returns the lockfile data cut down to what precedes the
// first [[packs]] header plus the one entry whose name line is name's, in
// Marshal's form; false unless exactly one entry matches in a file without
// multi-line strings.
func lockFragment(data []byte, name string) ([]byte, bool) {
	if bytes.Contains(data, []byte(`"""`)) || bytes.Contains(data, []byte(`'''`)) {
		return nil, false
	}
	header := []byte("\n[[packs]]\n")
	first := bytes.Index(data, header)
	if first < 0 {
		return nil, false
	}
	needle := []byte("\nname = " + tomlString(name) + "\n")
	at := bytes.Index(data, needle)
	if at < 0 || bytes.Contains(data[at+1:], needle) {
		return nil, false
	}
	start := bytes.LastIndex(data[:at+1], header)
	if start < 0 || bytes.Contains(data[start+1:at+1], []byte("\n[")) {
		// The name line is not the entry's own key (it sits in a table
		// below the header): not the canonical form.
		return nil, false
	}
	end := len(data)
	if next := bytes.Index(data[at:], header); next >= 0 {
		end = at + next + 1
	}
	frag := make([]byte, 0, first+1+end-start)
	frag = append(frag, data[:first+1]...)
	return append(frag, data[start+1:end]...), true
}

// lockDoc is the shadow of the TOML document: pointers tell a missing field
// from a zero one.
type lockDoc struct {
	Version *int           `toml:"version"`
	Packs   []lockDocEntry `toml:"packs"`
}

type lockDocEntry struct {
	Name         *string               `toml:"name"`
	Version      *string               `toml:"version"`
	Source       *string               `toml:"source"`
	Integrity    *string               `toml:"integrity"`
	Installed    *string               `toml:"installed"`
	Resolved     *string               `toml:"resolved"`
	Signer       *string               `toml:"signer"`
	Capabilities map[string]lockDocCap `toml:"capabilities"`
}

type lockDocCap struct {
	Granted   *bool    `toml:"granted"`
	Resources []string `toml:"resources"`
}

// ParseLock parses lockfile content; file names it in errors.
func ParseLock(file string, data []byte) (*Lockfile, error) {
	var doc lockDoc
	dec := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return nil, tomlLockError(file, err)
	}
	lines := lockLines(data)
	fail := func(line int, rule, format string, args ...any) error {
		return &LockError{File: file, Line: line, Rule: rule, Message: fmt.Sprintf(format, args...)}
	}
	switch {
	case doc.Version == nil:
		return nil, fail(0, "lock-version", "no version key: the first line should be \"version = %d\"; reinstall the packs if the file was lost", LockVersion)
	case *doc.Version != LockVersion:
		return nil, fail(lines.key(0, "version"), "lock-version", "version %d is not supported (this packs reads version %d): upgrade packs", *doc.Version, LockVersion)
	}
	l := &Lockfile{}
	for i, d := range doc.Packs {
		at := lines.entry(i)
		field := func(key string) int { return lines.entryKey(i, key) }
		var e LockEntry
		switch {
		case d.Name == nil:
			return nil, fail(at, "lock-missing-field", "[[packs]] entry has no name: remove the entry and reinstall the pack")
		case !validDirName(*d.Name):
			return nil, fail(field("name"), "lock-name", "name %q cannot be a pack folder name: remove the entry and reinstall the pack", *d.Name)
		case d.Source == nil || *d.Source == "":
			return nil, fail(at, "lock-missing-field", "pack %q has no source: reinstall it with packs add", *d.Name)
		case d.Integrity == nil:
			return nil, fail(at, "lock-missing-field", "pack %q has no integrity: reinstall it with packs add", *d.Name)
		case !packs.ValidDigest(*d.Integrity):
			return nil, fail(field("integrity"), "lock-integrity", "pack %q: integrity must be \"sha256:\" and 64 lower-case hex digits: reinstall it with packs add", *d.Name)
		case d.Installed == nil:
			return nil, fail(at, "lock-missing-field", "pack %q has no installed time: reinstall it with packs add", *d.Name)
		}
		e.Name, e.Source, e.Integrity = *d.Name, *d.Source, *d.Integrity
		if d.Version != nil {
			e.Version = *d.Version
		}
		t, err := time.Parse(time.RFC3339Nano, *d.Installed)
		if err != nil {
			return nil, fail(field("installed"), "lock-installed", "pack %q: installed %q is not an RFC 3339 time such as 2026-01-02T10:00:00Z", e.Name, *d.Installed)
		}
		e.Installed = t
		if d.Resolved != nil {
			e.Resolved = *d.Resolved
		}
		if d.Signer != nil {
			e.Signer = *d.Signer
		}
		if len(d.Capabilities) > 0 {
			e.Capabilities = make(map[capability.Name]LockCapability, len(d.Capabilities))
		}
		for key, c := range d.Capabilities {
			n, err := capability.ParseName(key)
			if err != nil {
				return nil, fail(lines.entryKey(i, key), "lock-capability", "pack %q: %v", e.Name, err)
			}
			if c.Granted == nil {
				return nil, fail(lines.entryKey(i, key), "lock-missing-field", "pack %q: %s needs granted = true or false", e.Name, key)
			}
			e.Capabilities[n] = LockCapability{Granted: *c.Granted, Resources: c.Resources}
		}
		if _, dup := l.find(e.Name); dup {
			return nil, fail(at, "lock-duplicate", "pack %q is listed twice: remove one entry and run packs add again", e.Name)
		}
		l.put(e)
	}
	return l, nil
}

// tomlLockError turns a go-toml error into a *LockError with its line.
func tomlLockError(file string, err error) error {
	var strict *toml.StrictMissingError
	if errors.As(err, &strict) && len(strict.Errors) > 0 {
		de := strict.Errors[0]
		line, _ := de.Position()
		return &LockError{File: file, Line: line, Rule: "lock-unknown-key",
			Message: fmt.Sprintf("unknown key %q: packs.lock holds only version and [[packs]] entries (name, version, source, integrity, installed, resolved, signer, capabilities); remove it", strings.Join(de.Key(), "."))}
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		line, _ := de.Position()
		return &LockError{File: file, Line: line, Rule: "lock-syntax",
			Message: strings.TrimPrefix(de.Error(), "toml: ") + ": fix the TOML or remove the file and reinstall the packs"}
	}
	return &LockError{File: file, Rule: "lock-syntax", Message: err.Error()}
}

// lockLineIndex finds the lines of [[packs]] headers and keys so semantic
// errors (found after decoding) can name a line.
type lockLineIndex struct {
	lines   [][]byte
	headers []int // 0-based line index of each [[packs]] header
}

func lockLines(data []byte) lockLineIndex {
	ix := lockLineIndex{lines: bytes.Split(data, []byte("\n"))}
	for i, l := range ix.lines {
		if string(bytes.TrimSpace(l)) == "[[packs]]" {
			ix.headers = append(ix.headers, i)
		}
	}
	return ix
}

// entry is the 1-based line of the i-th [[packs]] header, or 0.
func (ix lockLineIndex) entry(i int) int {
	if i < len(ix.headers) {
		return ix.headers[i] + 1
	}
	return 0
}

// key is the 1-based line where key is set, searching from line index from
// up to the next [[packs]] header; 0 when not found.
func (ix lockLineIndex) key(from int, key string) int {
	for j := from; j < len(ix.lines); j++ {
		if j > from && slices.Contains(ix.headers, j) {
			break
		}
		l := bytes.TrimSpace(ix.lines[j])
		if rest, ok := bytes.CutPrefix(l, []byte(key)); ok {
			if rest = bytes.TrimSpace(rest); len(rest) > 0 && rest[0] == '=' {
				return j + 1
			}
		}
	}
	return 0
}

// entryKey is the line of key inside the i-th entry, or the entry's line.
func (ix lockLineIndex) entryKey(i int, key string) int {
	if i >= len(ix.headers) {
		return 0
	}
	if l := ix.key(ix.headers[i], key); l > 0 {
		return l
	}
	return ix.entry(i)
}

// Marshal renders the lockfile in its canonical form: entries sorted by
// name, capabilities in the order of capability.All().
func (l *Lockfile) Marshal() []byte {
	var b bytes.Buffer
	b.WriteString("# packs.lock: written by packs; edits are overwritten.\n")
	fmt.Fprintf(&b, "version = %d\n", LockVersion)
	for _, e := range l.Packs {
		b.WriteString("\n[[packs]]\n")
		fmt.Fprintf(&b, "name = %s\n", tomlString(e.Name))
		fmt.Fprintf(&b, "version = %s\n", tomlString(e.Version))
		fmt.Fprintf(&b, "source = %s\n", tomlString(e.Source))
		fmt.Fprintf(&b, "integrity = %s\n", tomlString(e.Integrity))
		fmt.Fprintf(&b, "installed = %s\n", tomlString(e.Installed.UTC().Format(time.RFC3339Nano)))
		if e.Resolved != "" {
			fmt.Fprintf(&b, "resolved = %s\n", tomlString(e.Resolved))
		}
		if e.Signer != "" {
			fmt.Fprintf(&b, "signer = %s\n", tomlString(e.Signer))
		}
		if len(e.Capabilities) == 0 {
			continue
		}
		b.WriteString("\n[packs.capabilities]\n")
		for _, n := range capability.All() {
			c, ok := e.Capabilities[n]
			if !ok {
				continue
			}
			fmt.Fprintf(&b, "%s = { granted = %t, resources = [", n, c.Granted)
			for i, r := range c.Resources {
				if i > 0 {
					b.WriteString(", ")
				}
				b.WriteString(tomlString(r))
			}
			b.WriteString("] }\n")
		}
	}
	return b.Bytes()
}

// WriteLock writes l to path atomically: a temporary file in the same
// folder, flushed, then renamed over path, then the folder flushed.
func WriteLock(path string, l *Lockfile) error {
	return writeFileAtomic(path, l.Marshal())
}

// writeFileAtomic replaces path with data so that a crash leaves either the
// old content or the new, never a mix.
func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("packs: write %s: %w", path, err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(0o600)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("packs: write %s: %w", path, err)
	}
	if err := syncPath(dir); err != nil {
		return fmt.Errorf("packs: write %s: %w", path, err)
	}
	return nil
}

// tomlString quotes s as a TOML basic string.
func tomlString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// validDirName reports whether name can be the folder of an installed pack:
// one path element, not hidden, printable UTF-8, at most 255 bytes. The pack
// parser applies the stricter naming rules; this only keeps a lockfile entry
// from naming a path outside packs/.
func validDirName(name string) bool {
	if name == "" || len(name) > 255 || name[0] == '.' || !utf8.ValidString(name) {
		return false
	}
	for _, r := range name {
		if r == '/' || r == '\\' || !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}
