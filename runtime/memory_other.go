//go:build !(linux || darwin)

package runtime

// reserve has no address-space reservation to offer here: linear memories
// live on the Go heap (heapMemory).
func (b *memBudget) reserve(capacity, maximum uint64, img *dataImage) linearMemory {
	return nil
}
