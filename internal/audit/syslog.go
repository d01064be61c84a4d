package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"time"
)

// ErrSyslogURL is returned by DialSyslog for an address it cannot use.
var ErrSyslogURL = errors.New("audit: bad syslog address")

// maxDatagram is the most a UDP syslog message may hold (RFC 5426 §3.2
// lets a receiver refuse more; IPv4's own limit is 65507).
const maxDatagram = 65507

// Syslog sends audit rows to a syslog receiver (a SIEM's collector) as RFC
// 5424 messages: over UDP one datagram each (RFC 5426), over TCP framed by
// octet counting (RFC 6587 §3.4.1). Each message's MSG is the row's JSONL
// line, chain fields and all, so the receiver can check the chain as
// packs audit verify --file does.
type Syslog struct {
	conn net.Conn
	tcp  bool
	host string
	pid  int
}

// DialSyslog connects to addr, "udp://HOST:PORT" or "tcp://HOST:PORT".
func DialSyslog(addr string, timeout time.Duration) (*Syslog, error) {
	u, err := url.Parse(addr)
	if err != nil || (u.Scheme != "udp" && u.Scheme != "tcp") || u.Port() == "" || u.Path != "" || u.User != nil {
		return nil, fmt.Errorf("%w %q: write udp://HOST:PORT or tcp://HOST:PORT", ErrSyslogURL, addr)
	}
	conn, err := net.DialTimeout(u.Scheme, u.Host, timeout)
	if err != nil {
		return nil, fmt.Errorf("audit: syslog %s: %w", addr, err)
	}
	host, _ := os.Hostname()
	return &Syslog{conn: conn, tcp: u.Scheme == "tcp", host: host, pid: os.Getpid()}, nil
}

// Send writes e as one message.
func (s *Syslog) Send(e Entry) error {
	msg, err := FormatSyslog(e, s.host, s.pid)
	if err != nil {
		return err
	}
	if s.tcp {
		msg = append(strconv.AppendInt(nil, int64(len(msg)), 10), append([]byte{' '}, msg...)...)
	} else if len(msg) > maxDatagram {
		return fmt.Errorf("audit: syslog: seq %d is %d bytes, more than one UDP datagram holds: use tcp://", e.Seq, len(msg))
	}
	if _, err := s.conn.Write(msg); err != nil {
		return fmt.Errorf("audit: syslog: seq %d: %w", e.Seq, err)
	}
	return nil
}

// Close closes the connection.
func (s *Syslog) Close() error { return s.conn.Close() }

// Facility 13 is "log audit" (RFC 5424 §6.2.1).
const (
	syslogAudit   = 13
	syslogWarning = 4
	syslogInfo    = 6
)

// FormatSyslog is e as an RFC 5424 message:
//
//	<PRI>1 TIMESTAMP HOSTNAME packs PROCID KIND - BOM{"seq":…}
//
// at facility "log audit", severity warning for a denial (an exercise
// refused, a call that did not end ok) and informational otherwise. host
// is "-" when empty or not printable ASCII.
func FormatSyslog(e Entry, host string, pid int) ([]byte, error) {
	line, err := json.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("audit: syslog: seq %d: %w", e.Seq, err)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "<%d>1 %s %s packs %d %s - \ufeff", syslogAudit*8+severity(e), e.At.UTC().Format("2006-01-02T15:04:05.000000Z"),
		header(host, 255), pid, header(string(e.Kind), 32))
	b.Write(line)
	return b.Bytes(), nil
}

func severity(e Entry) int {
	switch e.Kind {
	case KindExercise:
		var b exerciseBody
		if json.Unmarshal(e.Body, &b) == nil && !b.Allowed {
			return syslogWarning
		}
	case KindInvocation:
		var b invocationBody
		if json.Unmarshal(e.Body, &b) == nil && b.Status != StatusOK {
			return syslogWarning
		}
	}
	return syslogInfo
}

// header is s as an RFC 5424 header field: 1 to limit printable US-ASCII
// characters, else the nil value "-".
func header(s string, limit int) string {
	if s == "" || len(s) > limit {
		return "-"
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 33 || s[i] > 126 {
			return "-"
		}
	}
	return s
}
