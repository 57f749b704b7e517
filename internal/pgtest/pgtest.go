// Package pgtest starts a throw-away PostgreSQL server for tests: Debian's postgresql binaries, a fresh data
// directory in a temporary folder, listening on a loopback port, run as the unprivileged postgres user when the
// test runs as root (PostgreSQL refuses to run as root). scripts/install-test-deps installs the package.
package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Server is one running PostgreSQL server.
type Server struct {
	// URL reaches the server's postgres database as its superuser (trust authentication on loopback).
	URL    string
	dir    string
	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd has exited
}

// New starts a server for the test and stops it (removing its data) when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	s, err := Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// binDir finds the directory of Debian's PostgreSQL server binaries (the newest installed version).
func binDir() (string, error) {
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(matches) == 0 {
		if p, err := exec.LookPath("initdb"); err == nil {
			return filepath.Dir(p), nil
		}
		return "", errors.New("pgtest: PostgreSQL is not installed (scripts/install-test-deps installs Debian's postgresql)")
	}
	sort.Slice(matches, func(i, j int) bool {
		vi, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(matches[i]))))
		vj, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(matches[j]))))
		return vi > vj
	})
	return filepath.Dir(matches[0]), nil
}

// Start initialises a data directory and starts a server on a free loopback port.
func Start(ctx context.Context) (*Server, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	s := &Server{dir: dir}
	var asUser []string
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("pgtest: running as root needs the postgres user: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("pgtest: %w", err)
		}
		asUser = []string{"runuser", "-u", "postgres", "--"}
	}
	command := func(name string, args ...string) *exec.Cmd {
		full := append(append(append([]string{}, asUser...), filepath.Join(bin, name)), args...)
		return exec.CommandContext(ctx, full[0], full[1:]...)
	}
	data := filepath.Join(dir, "data")
	if out, err := command("initdb", "-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync").CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("pgtest: initdb: %w\n%s", err, out)
	}
	// The port is free when chosen but may be taken before the server binds it (other tests start servers
	// too): a server that could not bind, or a port that answers with another server's data directory, is a
	// collision, and the next attempt takes another port.
	var lastErr error
	for range 5 {
		err := s.listen(ctx, asUser, bin, data)
		if err == nil {
			return s, nil
		}
		lastErr = err
		if !errors.Is(err, errPortTaken) {
			break
		}
	}
	s.Stop()
	return nil, lastErr
}

var errPortTaken = errors.New("pgtest: port taken")

// listen starts the server on a free port and waits until it accepts connections.
func (s *Server) listen(ctx context.Context, asUser []string, bin, data string) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	logPath := filepath.Join(s.dir, "server.log")
	logf, err := os.Create(logPath)
	if err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	defer logf.Close()
	full := append(append([]string{}, asUser...), filepath.Join(bin, "postgres"), "-D", data, "-p", strconv.Itoa(port),
		"-k", s.dir, "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "synchronous_commit=off",
		"-c", "full_page_writes=off", "-c", "max_connections=300")
	cmd := exec.Command(full[0], full[1:]...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("pgtest: start postgres: %w", err)
	}
	s.cmd = cmd
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	s.exited = exited
	s.URL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case <-exited:
			s.cmd = nil
			log, _ := os.ReadFile(logPath)
			if bytes.Contains(log, []byte("could not bind")) || bytes.Contains(log, []byte("already in use")) {
				return fmt.Errorf("%w: %d", errPortTaken, port)
			}
			return fmt.Errorf("pgtest: postgres exited:\n%s", log)
		default:
		}
		conn, err := pgx.Connect(ctx, s.URL)
		if err == nil {
			var dir string
			err = conn.QueryRow(ctx, "SHOW data_directory").Scan(&dir)
			conn.Close(ctx)
			if err == nil && filepath.Clean(dir) != filepath.Clean(data) {
				s.stopProcess()
				return fmt.Errorf("%w: %d answers with another server", errPortTaken, port)
			}
			if err == nil {
				return nil
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			log, _ := os.ReadFile(logPath)
			return fmt.Errorf("pgtest: server did not accept connections: %w\n%s", err, log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// NewDatabase creates a fresh database on the server and returns its URL.
func (s *Server) NewDatabase(ctx context.Context, name string) (string, error) {
	conn, err := pgx.Connect(ctx, s.URL)
	if err != nil {
		return "", fmt.Errorf("pgtest: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", fmt.Errorf("pgtest: create database %s: %w", name, err)
	}
	cfg, err := pgx.ParseConfig(s.URL)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("postgres://postgres@%s:%d/%s?sslmode=disable", cfg.Host, cfg.Port, name), nil
}

// Stop shuts the server down (fast shutdown: sessions are disconnected) and removes its data directory.
func (s *Server) Stop() {
	s.stopProcess()
	os.RemoveAll(s.dir)
}

func (s *Server) stopProcess() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	// runuser forwards the signal to postgres; signal the group so nothing is left behind either way.
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGINT)
	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.exited
	}
	s.cmd = nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgtest: free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
