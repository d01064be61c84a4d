package tools

import (
	"strings"
	"time"
)

// Now is the clock; tests replace it.
var Now = time.Now

type timeArgs struct {
	Timezone string `json:"timezone"`
	Format   string `json:"format"`
}

// TimeResult is get_current_time's result.
type TimeResult struct {
	CurrentTime any    `json:"current_time"` // a string, or a number for unix
	Timezone    string `json:"timezone"`
	Format      string `json:"format"`
	UTCOffset   string `json:"utc_offset"`
}

// GetCurrentTime is current-time's get_current_time.
var GetCurrentTime = wrap(getCurrentTime)

func getCurrentTime(a timeArgs) (TimeResult, error) {
	if a.Timezone == "" {
		a.Timezone = "UTC"
	}
	if a.Format == "" {
		a.Format = "iso8601"
	}
	// "Local" would be the sandbox's zone, which is UTC: refuse the
	// ambiguity instead of answering with a zone the person does not have.
	if strings.EqualFold(a.Timezone, "local") {
		return TimeResult{}, invalid("timezone %q: name an IANA zone such as Europe/Paris, or UTC", a.Timezone)
	}
	loc, err := time.LoadLocation(a.Timezone)
	if err != nil {
		return TimeResult{}, invalid("timezone %q is not a known IANA time zone: use a name such as UTC, America/New_York or Asia/Tokyo", a.Timezone)
	}
	t := Now().In(loc)
	r := TimeResult{Timezone: loc.String(), Format: a.Format, UTCOffset: t.Format("-07:00")}
	switch a.Format {
	case "iso8601":
		r.CurrentTime = t.Format(time.RFC3339)
	case "unix":
		r.CurrentTime = t.Unix()
	case "human":
		r.CurrentTime = t.Format("Monday, January 2, 2006 at 3:04:05 PM MST")
	default:
		return TimeResult{}, invalid("format %q: use iso8601, unix or human", a.Format)
	}
	return r, nil
}
