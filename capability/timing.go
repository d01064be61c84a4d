package capability

import (
	"fmt"
	"strconv"
	"time"
)

// DescribeTiming says where a call's time went, as every front end and
// the audit log tell it: "waited 12 s for you, ran 41 ms" when the gate
// waited for a person (waited is at least WaitShown), else "ran 41 ms".
func DescribeTiming(waited, ran time.Duration) string {
	if waited >= WaitShown {
		return "waited " + DescribeDuration(waited) + " for you, ran " + DescribeDuration(ran)
	}
	return "ran " + DescribeDuration(ran)
}

// WaitShown is the shortest wait for the gate worth telling: a decision
// nobody was asked for (the policy, the chat's memory, an attach) takes
// microseconds; a person's takes a second or more.
const WaitShown = 100 * time.Millisecond

// DescribeDuration writes d as people read it: "0.3 ms", "41 ms", "1.5 s",
// "12 s", "2 min 5 s".
func DescribeDuration(d time.Duration) string {
	ms := float64(d.Microseconds()) / 1000
	switch {
	case ms < 10:
		return strconv.FormatFloat(ms, 'f', 1, 64) + " ms"
	case ms < 1000:
		return strconv.FormatFloat(ms, 'f', 0, 64) + " ms"
	case ms < 10_000:
		return strconv.FormatFloat(ms/1000, 'f', 1, 64) + " s"
	case ms < 60_000:
		return strconv.FormatFloat(ms/1000, 'f', 0, 64) + " s"
	}
	return fmt.Sprintf("%d min %d s", int(d.Minutes()), int(d.Seconds())%60)
}
