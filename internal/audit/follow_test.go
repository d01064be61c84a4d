package audit_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/packs-run/packs/internal/audit"
)

// follow runs audit.Follow after seq after until stop says to, and returns
// the seqs it handed on.
func follow(t *testing.T, ctx context.Context, f func(context.Context, func(audit.Entry) error) error, stop func([]int64) bool) []int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second) // a follower that misses a row fails, not hangs
	defer cancel()
	var got []int64
	err := f(ctx, func(e audit.Entry) error {
		got = append(got, e.Seq)
		if stop(got) {
			cancel()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestFollowOnceAcrossRestart: a follower that stops and resumes after the
// last seq it kept, while a writer appends, sees every row exactly once.
func TestFollowOnceAcrossRestart(t *testing.T) {
	ctx := context.Background()
	db := openDB(t, "")
	l := openLog(t, db)
	const n = 60
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range n {
			if err := l.RecordExercise(exercise(i)); err != nil {
				t.Error(err)
				return
			}
			time.Sleep(time.Millisecond)
		}
	})
	run := func(after int64) func(context.Context, func(audit.Entry) error) error {
		return func(ctx context.Context, emit func(audit.Entry) error) error {
			return audit.Follow(ctx, db, after, 2*time.Millisecond, emit)
		}
	}
	first := follow(t, ctx, run(0), func(got []int64) bool { return len(got) >= 10 })
	last := first[len(first)-1]
	second := follow(t, ctx, run(last), func(got []int64) bool { return got[len(got)-1] >= n })
	wg.Wait()

	all := append(first, second...)
	if len(all) != n {
		t.Fatalf("got %d rows across the restart, want %d: %v", len(all), n, all)
	}
	for i, seq := range all {
		if seq != int64(i+1) {
			t.Fatalf("row %d has seq %d, want %d (every row once, in order): %v", i, seq, i+1, all)
		}
	}
}

// TestFollowStopsAtBrokenChain: a row edited in packs.db is never handed
// on; Follow stops at it with ErrBroken.
func TestFollowStopsAtBrokenChain(t *testing.T) {
	ctx := context.Background()
	db := openDB(t, "")
	l := openLog(t, db)
	for i := range 5 {
		if err := l.RecordExercise(exercise(i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.SQL().ExecContext(ctx, `UPDATE audit SET body = replace(body, 'h2.example', 'h9.example') WHERE seq = 3`); err != nil {
		t.Fatal(err)
	}
	var got []int64
	// Bounded: a follower that let the edited row through would follow on.
	fctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	err := audit.Follow(fctx, db, 0, time.Millisecond, func(e audit.Entry) error { got = append(got, e.Seq); return nil })
	if !errors.Is(err, audit.ErrBroken) {
		t.Fatalf("Follow over an edited row: %v, want ErrBroken", err)
	}
	if fmt.Sprint(got) != "[1 2]" {
		t.Fatalf("handed on %v, want [1 2]: nothing from the edited row on", got)
	}
}

func TestFollowAfterMissingRow(t *testing.T) {
	db := openDB(t, "")
	openLog(t, db)
	err := audit.Follow(context.Background(), db, 7, time.Millisecond, func(audit.Entry) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "no such row") {
		t.Fatalf("Follow after a seq packs.db does not hold: %v, want an error naming it", err)
	}
}

// rfc5424 is the message grammar of RFC 5424 §6 as the sink writes it: no
// structured data, MSG as UTF-8 after a BOM.
var rfc5424 = regexp.MustCompile(`^<(\d{1,3})>1 (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,6})?Z) ([!-~]{1,255}) ([!-~]{1,48}) ([!-~]{1,128}) ([!-~]{1,32}) - \x{FEFF}(.*)$`)

type syslogMsg struct {
	pri      int
	app, msg string
	msgid    string
}

func parseRFC5424(t *testing.T, b []byte) syslogMsg {
	t.Helper()
	m := rfc5424.FindSubmatch(b)
	if m == nil {
		t.Fatalf("not an RFC 5424 message: %q", b)
	}
	pri, _ := strconv.Atoi(string(m[1]))
	return syslogMsg{pri: pri, app: string(m[4]), msgid: string(m[6]), msg: string(m[7])}
}

// TestSyslogSink sends rows to real UDP and TCP listeners and checks each
// arrives as an RFC 5424 message whose MSG lines verify as a chain.
func TestSyslogSink(t *testing.T) {
	ctx := context.Background()
	db := openDB(t, "")
	l := openLog(t, db)
	for i := range 4 {
		if err := l.RecordExercise(exercise(i)); err != nil {
			t.Fatal(err)
		}
	}
	for _, network := range []string{"udp", "tcp"} {
		t.Run(network, func(t *testing.T) {
			msgs := make(chan []byte, 16)
			var addr string
			if network == "udp" {
				pc, err := net.ListenPacket("udp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { pc.Close() })
				addr = pc.LocalAddr().String()
				go func() {
					buf := make([]byte, 65536)
					for {
						n, _, err := pc.ReadFrom(buf)
						if err != nil {
							return
						}
						msgs <- bytes.Clone(buf[:n])
					}
				}()
			} else {
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { ln.Close() })
				addr = ln.Addr().String()
				go func() {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					defer c.Close()
					r := bufio.NewReader(c)
					for { // RFC 6587 octet counting: LEN SP MSG
						size, err := r.ReadString(' ')
						if err != nil {
							return
						}
						n, err := strconv.Atoi(strings.TrimSuffix(size, " "))
						if err != nil {
							t.Errorf("frame length %q: %v", size, err)
							return
						}
						b := make([]byte, n)
						if _, err := io.ReadFull(r, b); err != nil {
							return
						}
						msgs <- b
					}
				}()
			}
			s, err := audit.DialSyslog(network+"://"+addr, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			follow(t, ctx, func(ctx context.Context, emit func(audit.Entry) error) error {
				return audit.Follow(ctx, db, 0, time.Millisecond, func(e audit.Entry) error { return errors.Join(s.Send(e), emit(e)) })
			}, func(got []int64) bool { return len(got) == 4 })
			var jsonl bytes.Buffer
			for i := range 4 {
				var b []byte
				select {
				case b = <-msgs:
				case <-time.After(5 * time.Second):
					t.Fatalf("message %d never arrived", i+1)
				}
				m := parseRFC5424(t, b)
				// Facility 13 (log audit); exercise i is allowed when i is even.
				want := 13*8 + 6
				if i%2 == 1 {
					want = 13*8 + 4
				}
				if m.pri != want || m.app != "packs" || m.msgid != string(audit.KindExercise) {
					t.Errorf("message %d: PRI %d app %q msgid %q, want %d packs %s", i+1, m.pri, m.app, m.msgid, want, audit.KindExercise)
				}
				jsonl.WriteString(m.msg + "\n")
			}
			rep, err := audit.VerifyJSONL(&jsonl)
			if err != nil || !rep.OK() || rep.Rows != 4 {
				t.Fatalf("the received MSGs as a chain: %+v, %v; want 4 rows that hold", rep, err)
			}
		})
	}
}

func TestDialSyslogRefusesBadAddress(t *testing.T) {
	for _, addr := range []string{"", "127.0.0.1:514", "http://127.0.0.1:514", "udp://127.0.0.1", "tcp://u@127.0.0.1:514", "udp://127.0.0.1:514/x"} {
		if _, err := audit.DialSyslog(addr, time.Second); !errors.Is(err, audit.ErrSyslogURL) {
			t.Errorf("DialSyslog(%q): %v, want ErrSyslogURL", addr, err)
		}
	}
}
