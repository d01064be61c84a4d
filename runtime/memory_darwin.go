package runtime

// keepSpare keeps nothing here: macOS's MADV_DONTNEED may leave a page's
// content in place, so a closed memory's reservation cannot be emptied
// for the next one and is unmapped.
func keepSpare(spareKey, spare) bool { return false }

// takeSpare has no spare to give.
func takeSpare(spareKey) (spare, bool) { return spare{}, false }
