package runtime

// ProgramID names the running executable (its path, size, modification
// time and inode), as prepared modules' file names do: what one build of
// packs derived from a pack's files and kept may differ in another build.
// It is "" when the executable cannot be identified.
func ProgramID() string { return programID() }
