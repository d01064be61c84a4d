package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
)

// args are the arguments both tools share; search_logs adds limit.
type args struct {
	Paths  []string `json:"paths"`
	Levels []string `json:"levels"`
	Match  string   `json:"match"`
	Regex  string   `json:"regex"`
	Since  string   `json:"since"`
	Until  string   `json:"until"`
	Last   string   `json:"last"`
	Bucket string   `json:"bucket"`
	Top    *int     `json:"top"`
	Limit  *int     `json:"limit"`
	Year   int      `json:"year"`
}

// options are args checked and compiled.
type options struct {
	paths        []string
	levels       map[Level]bool // nil: every level
	match        string         // lower case
	re           *regexp.Regexp
	since, until time.Time
	last         time.Duration
	bucket       time.Duration
	top, limit   int
	year         int
}

func toolError(format string, a ...any) error {
	return fmt.Errorf("incident-triage: "+format, a...)
}

// parseArgs decodes and checks the arguments. defLevels applies when the
// arguments name none (nil: every level).
func parseArgs(input []byte, defLevels []Level, now time.Time) (options, error) {
	var a args
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return options{}, toolError("arguments: %v", err)
	}
	o := options{paths: a.Paths, match: strings.ToLower(a.Match), year: a.Year, top: 10, limit: 100}
	if len(o.paths) == 0 {
		o.paths = defaultPaths
	}
	if o.year == 0 {
		o.year = now.Year()
	}
	if o.year < 1970 || o.year > 9999 {
		return o, toolError("year %d is out of range", a.Year)
	}
	levels := defLevels
	if len(a.Levels) > 0 {
		levels = nil
		for _, s := range a.Levels {
			l, ok := parseLevelName(s)
			if !ok {
				return o, toolError("unknown level %q: use trace, debug, info, warn, error or fatal", s)
			}
			levels = append(levels, l)
		}
	}
	if levels != nil {
		o.levels = map[Level]bool{}
		for _, l := range levels {
			o.levels[l] = true
		}
	}
	if a.Regex != "" {
		re, err := regexp.Compile(a.Regex)
		if err != nil {
			return o, toolError("regex: %v (RE2 syntax; prefix (?i) to ignore case)", err)
		}
		o.re = re
	}
	for _, t := range []struct {
		name, val string
		dst       *time.Time
	}{{"since", a.Since, &o.since}, {"until", a.Until, &o.until}} {
		if t.val == "" {
			continue
		}
		v, ok := parseTimeArg(t.val)
		if !ok {
			return o, toolError("%s %q: write a time such as 2024-03-05T14:00:00Z (UTC when no zone is given)", t.name, t.val)
		}
		*t.dst = v
	}
	if a.Last != "" {
		if a.Since != "" {
			return o, toolError("pass last or since, not both")
		}
		d, ok := parseDuration(a.Last)
		if !ok {
			return o, toolError("last %q: write a duration such as 30m, 2h or 1d", a.Last)
		}
		o.last = d
	}
	if a.Bucket != "" {
		d, ok := parseDuration(a.Bucket)
		if !ok || d < time.Second {
			return o, toolError("bucket %q: write a duration of 1s or more, such as 1m, 5m or 1h", a.Bucket)
		}
		o.bucket = d
	}
	if a.Top != nil {
		if *a.Top < 1 || *a.Top > 50 {
			return o, toolError("top must be from 1 to 50")
		}
		o.top = *a.Top
	}
	if a.Limit != nil {
		if *a.Limit < 1 || *a.Limit > 1000 {
			return o, toolError("limit must be from 1 to 1000")
		}
		o.limit = *a.Limit
	}
	return o, nil
}

// Entry is one log entry: a line with a timestamp or level, plus the lines
// that continue it (stack traces).
type Entry struct {
	File    int
	Line    int
	Time    time.Time
	Level   Level
	Message string
	Text    []string // the first line and its continuations, capped
}

const (
	maxEntryLines = 20
	maxTextBytes  = 2000
)

func (e *Entry) text() string {
	s := strings.Join(e.Text, "\n")
	if len(s) > maxTextBytes {
		cut := maxTextBytes
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// FileStats is what a scan saw in one file.
type FileStats struct {
	Path    string `json:"path"`
	Lines   int    `json:"lines"`
	Entries int    `json:"entries"`
	Matched int    `json:"matched"`
}

// scan reads every file and calls all for each entry inside the time window
// (entries without a timestamp count as inside), then matched for those of
// them that also pass the level and text filters.
func scan(files []logFile, o options, all func(*Entry), matched func(*Entry)) ([]FileStats, error) {
	stats := make([]FileStats, len(files))
	for i, lf := range files {
		st := &stats[i]
		st.Path = lf.path
		var cur *Entry
		finish := func() {
			if cur == nil {
				return
			}
			e := cur
			cur = nil
			if !e.Time.IsZero() && (!o.since.IsZero() && e.Time.Before(o.since) || !o.until.IsZero() && e.Time.After(o.until)) {
				return
			}
			st.Entries++
			all(e)
			if o.levels != nil && !o.levels[e.Level] {
				return
			}
			if o.match != "" || o.re != nil {
				full := strings.Join(e.Text, "\n")
				if o.match != "" && !strings.Contains(strings.ToLower(full), o.match) || o.re != nil && !o.re.MatchString(full) {
					return
				}
			}
			st.Matched++
			matched(e)
		}
		err := eachLine(lf, func(s string) {
			st.Lines++
			if strings.TrimSpace(s) == "" {
				return
			}
			l := parseLine(s, o.year)
			// In a file whose entries carry timestamps, a line with neither a
			// timestamp nor a level continues the entry above it (an exception
			// class line, a wrapped message), as log shippers read it.
			orphan := l.Time.IsZero() && l.Level == LevelUnknown && cur != nil && !cur.Time.IsZero()
			if (l.Cont || orphan) && cur != nil {
				if len(cur.Text) < maxEntryLines {
					cur.Text = append(cur.Text, s)
				}
				return
			}
			finish()
			cur = &Entry{File: i, Line: st.Lines, Time: l.Time, Level: l.Level, Message: l.Message, Text: []string{s}}
		})
		finish()
		if err != nil {
			return nil, toolError("%v", err)
		}
	}
	return stats, nil
}

// latest finds the newest timestamp in the files, for "last".
func latest(files []logFile, year int) (time.Time, error) {
	var newest time.Time
	for _, lf := range files {
		err := eachLine(lf, func(s string) {
			if s == "" {
				return
			}
			if l := parseLine(s, year); l.Time.After(newest) {
				newest = l.Time
			}
		})
		if err != nil {
			return newest, toolError("%v", err)
		}
	}
	return newest, nil
}

// env is where a tool call finds its files.
type env struct {
	open      func(dir string) fs.FS
	workspace string
	now       time.Time
}

// prepare finds the files and settles the time window.
func prepare(e env, o *options) ([]logFile, []string, error) {
	files, warnings, err := findFiles(e.open, e.workspace, o.paths)
	if err != nil {
		return nil, nil, toolError("%v", err)
	}
	if len(files) == 0 {
		return nil, nil, toolError("no file matches %s; %s", strings.Join(o.paths, ", "), listing(e.open(e.workspace)))
	}
	if o.last > 0 {
		end, err := latest(files, o.year)
		if err != nil {
			return nil, nil, err
		}
		if end.IsZero() {
			return nil, nil, toolError("last needs timestamps, and no line of %d files has one it can read: use match or levels instead", len(files))
		}
		o.since = end.Add(-o.last)
	}
	return files, warnings, nil
}

type jsonTime time.Time

func (t jsonTime) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Time(t).UTC().Format(time.RFC3339Nano))
}

func stamp(t time.Time) *jsonTime {
	if t.IsZero() {
		return nil
	}
	j := jsonTime(t)
	return &j
}

// Location points at a line of a file.
type Location struct {
	File string    `json:"file"`
	Line int       `json:"line"`
	Time *jsonTime `json:"time,omitempty"`
	Text string    `json:"text"`
}

type signatureStats struct {
	Signature string         `json:"signature"`
	Count     int            `json:"count"`
	Levels    map[string]int `json:"levels"`
	First     *jsonTime      `json:"first,omitempty"`
	Last      *jsonTime      `json:"last,omitempty"`
	Files     []string       `json:"files"`
	Example   Location       `json:"example"`
	files     map[string]bool
	first     time.Time
	last      time.Time
	exampleAt time.Time
}

type bucketCount struct {
	Start jsonTime `json:"start"`
	Count int      `json:"count"`
}

type spike struct {
	Start    jsonTime `json:"start"`
	End      jsonTime `json:"end"`
	Count    int      `json:"count"`
	Baseline float64  `json:"baseline_per_bucket"`
	Factor   float64  `json:"factor"`
	Top      []string `json:"top_signatures"`
}

type triageReport struct {
	Files      []FileStats       `json:"files"`
	Window     map[string]any    `json:"window"`
	Levels     map[string]int    `json:"levels"`
	Matched    int               `json:"matched"`
	Undated    int               `json:"matched_without_time,omitempty"`
	Timeline   map[string]any    `json:"timeline,omitempty"`
	Spikes     []spike           `json:"spikes"`
	Signatures []*signatureStats `json:"signatures"`
	Warnings   []string          `json:"warnings,omitempty"`
}

type hit struct {
	t   time.Time
	sig int
}

// maxHits bounds the matched entries remembered for the timeline.
const maxHits = 2_000_000

// triage summarizes the matching entries: counts by level, a timeline,
// spikes, and the most frequent error signatures with first and last
// occurrence and an example.
func triage(e env, input []byte) ([]byte, error) {
	o, err := parseArgs(input, []Level{LevelError, LevelFatal}, e.now)
	if err != nil {
		return nil, err
	}
	files, warnings, err := prepare(e, &o)
	if err != nil {
		return nil, err
	}
	levels := map[string]int{}
	sigIndex := map[string]int{}
	var sigs []*signatureStats
	var hits []hit
	undated, matched := 0, 0
	var first, last time.Time
	all := func(e *Entry) { levels[e.Level.String()]++ }
	onMatch := func(e *Entry) {
		matched++
		key := signature(e.Message)
		i, ok := sigIndex[key]
		if !ok {
			i = len(sigs)
			sigIndex[key] = i
			sigs = append(sigs, &signatureStats{Signature: key, Levels: map[string]int{}, files: map[string]bool{}})
		}
		s := sigs[i]
		s.Count++
		s.Levels[e.Level.String()]++
		s.files[files[e.File].path] = true
		if s.Count == 1 || !e.Time.IsZero() && (s.exampleAt.IsZero() || e.Time.Before(s.exampleAt)) {
			s.Example = Location{File: files[e.File].path, Line: e.Line, Time: stamp(e.Time), Text: e.text()}
			s.exampleAt = e.Time
		}
		if e.Time.IsZero() {
			undated++
			return
		}
		if s.first.IsZero() || e.Time.Before(s.first) {
			s.first = e.Time
		}
		if e.Time.After(s.last) {
			s.last = e.Time
		}
		if first.IsZero() || e.Time.Before(first) {
			first = e.Time
		}
		if e.Time.After(last) {
			last = e.Time
		}
		if len(hits) < maxHits {
			hits = append(hits, hit{e.Time, i})
		}
	}
	fileStats, err := scan(files, o, all, onMatch)
	if err != nil {
		return nil, err
	}
	sort.SliceStable(sigs, func(a, b int) bool { return sigs[a].Count > sigs[b].Count })
	// hits refer to signatures by their index before sorting.
	for _, s := range sigs {
		s.First, s.Last = stamp(s.first), stamp(s.last)
		for f := range s.files {
			s.Files = append(s.Files, f)
		}
		slices.Sort(s.Files)
	}
	rep := triageReport{
		Files:    fileStats,
		Window:   map[string]any{"since": stamp(o.since), "until": stamp(o.until), "first_match": stamp(first), "last_match": stamp(last)},
		Levels:   levels,
		Matched:  matched,
		Undated:  undated,
		Spikes:   []spike{},
		Warnings: warnings,
	}
	if !first.IsZero() {
		keyOf := make([]string, len(sigIndex))
		for k, i := range sigIndex {
			keyOf[i] = k
		}
		bucket := o.bucket
		if bucket == 0 {
			bucket = autoBucket(last.Sub(first))
		}
		counts, start, capped := timeline(hits, first, last, bucket)
		rep.Timeline = map[string]any{"bucket": bucket.String(), "counts": counts}
		if capped {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("the timeline shows the first %d buckets: pass a larger bucket", maxBuckets))
		}
		rep.Spikes = spikes(hits, counts, start, bucket, keyOf)
	}
	rep.Signatures = sigs[:min(o.top, len(sigs))]
	if rep.Signatures == nil {
		rep.Signatures = []*signatureStats{}
	}
	return marshal(rep)
}

var bucketSizes = []time.Duration{
	time.Minute, 5 * time.Minute, 15 * time.Minute, 30 * time.Minute, time.Hour, 3 * time.Hour, 6 * time.Hour,
	12 * time.Hour, 24 * time.Hour, 7 * 24 * time.Hour,
}

// autoBucket picks the smallest bucket that shows span in at most 60 bars.
func autoBucket(span time.Duration) time.Duration {
	for _, b := range bucketSizes {
		if span/b < 60 {
			return b
		}
	}
	return bucketSizes[len(bucketSizes)-1]
}

// maxBuckets bounds the timeline.
const maxBuckets = 500

func timeline(hits []hit, first, last time.Time, bucket time.Duration) ([]bucketCount, time.Time, bool) {
	start := first.Truncate(bucket)
	n := int(last.Sub(start)/bucket) + 1
	capped := n > maxBuckets
	n = min(n, maxBuckets)
	counts := make([]bucketCount, n)
	for i := range counts {
		counts[i].Start = jsonTime(start.Add(time.Duration(i) * bucket))
	}
	for _, h := range hits {
		if i := int(h.t.Sub(start) / bucket); i < n {
			counts[i].Count++
		}
	}
	return counts, start, capped
}

// spikes finds runs of buckets well above the usual rate: at least 5
// entries and at least 3 times the median bucket (and never below 1).
func spikes(hits []hit, counts []bucketCount, start time.Time, bucket time.Duration, keyOf []string) []spike {
	vals := make([]int, len(counts))
	for i, c := range counts {
		vals[i] = c.Count
	}
	sorted := slices.Clone(vals)
	slices.Sort(sorted)
	median := float64(sorted[len(sorted)/2])
	if len(sorted)%2 == 0 {
		median = (float64(sorted[len(sorted)/2-1]) + float64(sorted[len(sorted)/2])) / 2
	}
	threshold := max(5, 3*max(median, 1))
	out := []spike{}
	for i := 0; i < len(vals); i++ {
		if float64(vals[i]) < threshold {
			continue
		}
		j, total := i, 0
		for j < len(vals) && float64(vals[j]) >= threshold {
			total += vals[j]
			j++
		}
		from, to := start.Add(time.Duration(i)*bucket), start.Add(time.Duration(j)*bucket)
		per := float64(total) / float64(j-i)
		out = append(out, spike{
			Start: jsonTime(from), End: jsonTime(to), Count: total,
			Baseline: median, Factor: round1(per / max(median, 1)),
			Top: topIn(hits, from, to, keyOf, 3),
		})
		i = j
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Count > out[b].Count })
	if len(out) > 10 {
		out = out[:10]
	}
	return out
}

func round1(f float64) float64 { return float64(int(f*10+0.5)) / 10 }

func topIn(hits []hit, from, to time.Time, keyOf []string, n int) []string {
	count := map[int]int{}
	for _, h := range hits {
		if !h.t.Before(from) && h.t.Before(to) {
			count[h.sig]++
		}
	}
	ids := make([]int, 0, len(count))
	for id := range count {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(a, b int) bool {
		if count[ids[a]] != count[ids[b]] {
			return count[ids[a]] > count[ids[b]]
		}
		return keyOf[ids[a]] < keyOf[ids[b]]
	})
	out := make([]string, 0, n)
	for _, id := range ids[:min(n, len(ids))] {
		out = append(out, fmt.Sprintf("%d× %s", count[id], keyOf[id]))
	}
	return out
}

type searchMatch struct {
	Location
	Level string `json:"level"`
}

// searchLogs returns the matching entries themselves, in file order.
func searchLogs(e env, input []byte) ([]byte, error) {
	o, err := parseArgs(input, nil, e.now)
	if err != nil {
		return nil, err
	}
	if o.match == "" && o.re == nil && o.levels == nil && o.since.IsZero() && o.until.IsZero() && o.last == 0 {
		return nil, toolError("say what to look for: match, regex, levels, or a time window (since, until, last)")
	}
	files, warnings, err := prepare(e, &o)
	if err != nil {
		return nil, err
	}
	var found []searchMatch
	count := 0
	fileStats, err := scan(files, o, func(*Entry) {}, func(en *Entry) {
		count++
		if len(found) < o.limit {
			found = append(found, searchMatch{
				Location: Location{File: files[en.File].path, Line: en.Line, Time: stamp(en.Time), Text: en.text()},
				Level:    en.Level.String(),
			})
		}
	})
	if err != nil {
		return nil, err
	}
	rep := struct {
		Matches   []searchMatch `json:"matches"`
		Count     int           `json:"count"`
		Truncated bool          `json:"truncated"`
		Files     []FileStats   `json:"files"`
		Warnings  []string      `json:"warnings,omitempty"`
	}{found, count, count > len(found), fileStats, warnings}
	if rep.Matches == nil {
		rep.Matches = []searchMatch{}
	}
	return marshal(rep)
}

// marshal encodes v without escaping <, > and &, which are common in what
// these tools return and cost a model six characters each when escaped.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
