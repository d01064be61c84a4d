//go:build !(linux || darwin)

package runtime

import "github.com/tetratelabs/wazero/experimental"

// reserve has no address-space reservation to offer here: linear memories
// live on the Go heap (heapMemory).
func (b *memBudget) reserve(capacity, maximum uint64, img *dataImage) experimental.LinearMemory {
	return nil
}
