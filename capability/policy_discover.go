package capability

// discoverSection is [discover]: which of the folders people keep Agent
// Skills in packs looks in (docs/policy.md, "Skills used in place"). The
// policy can only switch a kind of folder off; absent, both kinds are
// looked in.
type discoverSection struct {
	Project *bool `toml:"project,omitempty"` // .claude/skills and .agents/skills below the working directory
	User    *bool `toml:"user,omitempty"`    // the same under the person's home, and ~/.codex/skills
}

// discoverOff is [discover] parsed: the kinds of folder switched off.
type discoverOff struct {
	project, user bool
}

func (p *Policy) parseDiscover(d *discoverSection) {
	p.discoverOff = discoverOff{project: d.Project != nil && !*d.Project, user: d.User != nil && !*d.User}
}

// DiscoverProject reports whether skills may be discovered in the project
// folders (below the working directory); a nil policy allows it.
func (p *Policy) DiscoverProject() bool { return p == nil || !p.discoverOff.project }

// DiscoverUser reports whether skills may be discovered in the person's
// own folders (under their home); a nil policy allows it.
func (p *Policy) DiscoverUser() bool { return p == nil || !p.discoverOff.user }

// section is the [discover] that says what d switches off, for the
// effective policy's text.
func (d discoverOff) section() discoverSection {
	var s discoverSection
	off := false
	if d.project {
		s.Project = &off
	}
	if d.user {
		s.User = &off
	}
	return s
}
