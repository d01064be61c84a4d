// Package testpg starts a real PostgreSQL (Debian's postgresql package) for
// the tests of one test binary: one server, in a temporary directory, on
// a Unix socket there only, started by the first test that asks and
// stopped by Main. Each test gets a schema of its own on it, so tests do
// not see each other's rows. Only tests import it.
//
// Tests run as root here and initdb refuses root, so the server runs as
// the postgres user (else nobody), through setpriv. Without the binaries a
// test is skipped with a message saying what to install, except in CI
// (CI set), where that is a failure.
package testpg

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver, for the admin connection
)

// server is the running PostgreSQL of this test binary.
type server struct {
	dir  string    // the temporary directory: data/ and the socket
	cmd  *exec.Cmd // the postmaster
	exit chan struct{}
	err  error   // its Wait
	db   *sql.DB // the admin connection: makes the schemas
}

var (
	once    sync.Once
	shared  *server
	initErr error
	schemas atomic.Int64
)

// Main runs the tests of m and stops the server if one started. Call it
// from TestMain: os.Exit(testpg.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	if shared != nil {
		if err := shared.stop(); err != nil {
			fmt.Fprintln(os.Stderr, "testpg:", err)
		}
	}
	return code
}

// URL returns the store URL of a new, empty schema on the shared server,
// starting the server on first use. It skips tb when PostgreSQL is not
// installed, and fails it in CI. The server runs without fsync: tests
// kill packs processes, never the server, so every acknowledged commit
// stays.
func URL(tb testing.TB) string {
	tb.Helper()
	return newSchema(tb)
}

// DurableURL is URL on a server that fsyncs its commits, as a deployed
// one does: for benchmarks that compare it with SQLite, which fsyncs
// packs.db's. It turns fsync on for the rest of the test binary.
func DurableURL(tb testing.TB) string {
	tb.Helper()
	url := newSchema(tb)
	durableOnce.Do(func() {
		if _, durableErr = shared.db.Exec(`ALTER SYSTEM SET fsync = on`); durableErr != nil {
			return
		}
		if _, durableErr = shared.db.Exec(`SELECT pg_reload_conf()`); durableErr != nil {
			return
		}
		// The reload is a signal: wait until a new session sees it.
		for range 500 {
			var v string
			if durableErr = shared.db.QueryRow(`SHOW fsync`).Scan(&v); durableErr != nil || v == "on" {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		durableErr = errors.New("fsync still off 5 s after the reload")
	})
	if durableErr != nil {
		tb.Fatalf("testpg: turn fsync on: %v", durableErr)
	}
	return url
}

var (
	durableOnce sync.Once
	durableErr  error
)

func newSchema(tb testing.TB) string {
	tb.Helper()
	once.Do(func() { shared, initErr = start() })
	if errors.Is(initErr, errMissing) && os.Getenv("CI") == "" {
		tb.Skipf("testpg: %v: install Debian's postgresql package (WITH_TEST_DEPS=1 scripts/deps.sh) to run the PostgreSQL tests", initErr)
	}
	if initErr != nil {
		tb.Fatalf("testpg: %v", initErr)
	}
	name := "t" + strconv.FormatInt(schemas.Add(1), 10)
	if _, err := shared.db.Exec(`CREATE SCHEMA ` + name); err != nil {
		tb.Fatalf("testpg: create schema: %v", err)
	}
	return shared.url(name)
}

var errMissing = errors.New("PostgreSQL's initdb and postgres are not installed")

// binDir is the newest /usr/lib/postgresql/N/bin with initdb and postgres.
func binDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int {
		va, _ := strconv.Atoi(filepath.Base(filepath.Dir(a)))
		vb, _ := strconv.Atoi(filepath.Base(filepath.Dir(b)))
		return vb - va
	})
	for _, d := range dirs {
		_, e1 := os.Stat(filepath.Join(d, "initdb"))
		_, e2 := os.Stat(filepath.Join(d, "postgres"))
		if e1 == nil && e2 == nil {
			return d, nil
		}
	}
	return "", errMissing
}

// asUser is argv run as the server's user: through setpriv when this
// process is root, which initdb and postgres refuse to run as; the server
// gets SIGKILL when the test binary dies.
func asUser(uid, gid int, argv ...string) *exec.Cmd {
	if os.Geteuid() != 0 {
		return exec.Command(argv[0], argv[1:]...)
	}
	args := append([]string{"--reuid=" + strconv.Itoa(uid), "--regid=" + strconv.Itoa(gid), "--clear-groups", "--pdeathsig=KILL", "--"}, argv...)
	return exec.Command("setpriv", args...)
}

// serverUser is who runs the server when the tests run as root.
func serverUser() (uid, gid int, err error) {
	if os.Geteuid() != 0 {
		return os.Geteuid(), os.Getegid(), nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		return uid, gid, nil
	}
	return 0, 0, errors.New("neither a postgres nor a nobody user to run PostgreSQL as")
}

func start() (*server, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	uid, gid, err := serverUser()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "packs-pg-")
	if err != nil {
		return nil, err
	}
	s := &server{dir: dir, exit: make(chan struct{})}
	fail := func(err error) (*server, error) {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := os.Chown(dir, uid, gid); err != nil {
		return fail(err)
	}
	data := filepath.Join(dir, "data")
	initdb := asUser(uid, gid, filepath.Join(bin, "initdb"), "-D", data, "-U", "packs", "--auth=trust",
		"--no-sync", "--no-instructions", "--encoding=UTF8", "--locale=C")
	if out, err := initdb.CombinedOutput(); err != nil {
		return fail(fmt.Errorf("initdb: %v: %s", err, out))
	}
	// No TCP: the socket in dir only. fsync off until DurableURL, in the
	// configuration file so that ALTER SYSTEM can turn it on.
	if err := appendFile(filepath.Join(data, "postgresql.conf"), "\nfsync = off\n"); err != nil {
		return fail(err)
	}
	s.cmd = asUser(uid, gid, filepath.Join(bin, "postgres"), "-D", data, "-k", dir, "-c", "listen_addresses=",
		"-c", "max_connections=300", "-c", "shared_buffers=32MB")
	log, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		return fail(err)
	}
	defer log.Close()
	s.cmd.Stdout, s.cmd.Stderr = log, log
	if err := s.cmd.Start(); err != nil {
		return fail(fmt.Errorf("postgres: %w", err))
	}
	go func() { s.err = s.cmd.Wait(); close(s.exit) }()
	if s.db, err = sql.Open("pgx", s.url("public")); err != nil {
		s.stop()
		return nil, err
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := s.db.PingContext(ctx)
		cancel()
		if err == nil {
			return s, nil
		}
		select {
		case <-s.exit:
			b, _ := os.ReadFile(filepath.Join(dir, "server.log"))
			os.RemoveAll(dir)
			return nil, fmt.Errorf("postgres exited: %v: %s", s.err, b)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.stop()
			return nil, fmt.Errorf("postgres did not accept connections within a minute: %v", err)
		}
	}
}

// url is the store URL of schema on s.
func (s *server) url(schema string) string {
	q := url.Values{"host": {s.dir}, "search_path": {schema}}
	return "postgres://packs@/postgres?" + q.Encode()
}

// stop shuts the server down (fast: open sessions are ended) and removes
// its directory.
func (s *server) stop() error {
	if s.db != nil {
		s.db.Close()
	}
	s.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-s.exit:
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		<-s.exit
	}
	return os.RemoveAll(s.dir)
}

func appendFile(path, text string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(text)
	return errors.Join(err, f.Close())
}
