package capability_test

import (
	"testing"
	"time"

	"github.com/packs-run/packs/capability"
)

func TestDescribeTiming(t *testing.T) {
	for _, tt := range []struct {
		waited, ran time.Duration
		want        string
	}{
		{12 * time.Second, 41 * time.Millisecond, "waited 12 s for you, ran 41 ms"},
		{20 * time.Microsecond, 300 * time.Microsecond, "ran 0.3 ms"},
		{1500 * time.Millisecond, 2 * time.Millisecond, "waited 1.5 s for you, ran 2.0 ms"},
		{125 * time.Second, 0, "waited 2 min 5 s for you, ran 0.0 ms"},
	} {
		if got := capability.DescribeTiming(tt.waited, tt.ran); got != tt.want {
			t.Errorf("DescribeTiming(%v, %v) = %q, want %q", tt.waited, tt.ran, got, tt.want)
		}
	}
}
