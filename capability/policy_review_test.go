package capability

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestPolicyReview(t *testing.T) {
	for _, tt := range []struct {
		doc   string
		after time.Duration
		lapse bool
	}{
		{"", 0, false},
		{"[review]\nafter = \"90d\"\n", 90 * 24 * time.Hour, false},
		{"[review]\nafter = \"720h\"\nlapse = true\n", 720 * time.Hour, true},
	} {
		p, err := ParsePolicy("policy.toml", []byte(tt.doc))
		if err != nil {
			t.Fatalf("%q: %v", tt.doc, err)
		}
		if p.ReviewAfter() != tt.after || p.ReviewLapse() != tt.lapse {
			t.Errorf("%q: after %v lapse %v, want %v %v", tt.doc, p.ReviewAfter(), p.ReviewLapse(), tt.after, tt.lapse)
		}
		if f, _ := p.Format(); tt.after != 0 && !strings.Contains(f, "[review]") {
			t.Errorf("%q: Format lost [review]:\n%s", tt.doc, f)
		}
	}
	for _, doc := range []string{
		"[review]\nafter = \"soon\"\n",
		"[review]\nafter = \"0d\"\n",
		"[review]\nafter = \"-5h\"\n",
		"[review]\nlapse = true\n",
		"[review]\nafter = \"90d\"\nevery = 3\n",
	} {
		var pe *PolicyError
		if _, err := ParsePolicy("policy.toml", []byte(doc)); !errors.Is(err, ErrBadPolicy) || !errors.As(err, &pe) || pe.Line == 0 {
			t.Errorf("%q: err = %v, want a PolicyError with a line", doc, err)
		}
	}
	var none *Policy
	if none.ReviewAfter() != 0 || none.ReviewLapse() {
		t.Error("no policy asks for a review")
	}
}
