package storage

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The daemon's objects, by their QOM ids.
const (
	tlsObjectID   = "stratus-tls"
	authzObjectID = "stratus-authz"
)

// daemon runs (or adopts) the exporter's qemu-storage-daemon. The
// daemon is started in a session of its own: it keeps
// serving the exports while the agent restarts, and the next agent
// finds it by its monitor socket and pid file in the state directory.
func (e *NBDExporter) daemon() error {
	if e.q != nil {
		if err := e.q.run("query-version", nil, nil); err == nil {
			return nil
		}
		e.q.close()
		e.q = nil
	}
	if q, err := dialQMP(e.sockPath()); err == nil {
		e.log.Info("NBD export daemon adopted", "socket", e.sockPath())
		e.q = q
		// An agent that stopped between the start and the setup left
		// the daemon without its server.
		return e.serve()
	}
	// The socket answers no one: whatever the pid file names is stale
	// or stuck.
	if err := e.kill(); err != nil {
		return err
	}
	if err := e.start(); err != nil {
		return err
	}
	q, err := dialQMP(e.sockPath())
	if err != nil {
		_ = e.kill()
		return fmt.Errorf("NBD export daemon: %w", err)
	}
	e.q = q
	if err := e.serve(); err != nil {
		_ = e.stopDaemon()
		return err
	}
	e.log.Info("NBD export daemon started", "address", e.cfg.Address)
	return nil
}

func (e *NBDExporter) sockPath() string { return filepath.Join(e.cfg.StateDir, "qsd.sock") }
func (e *NBDExporter) pidPath() string  { return filepath.Join(e.cfg.StateDir, "qsd.pid") }

// start launches the daemon with its monitor only (serve configures
// it) in a session of its own, so that it outlives the agent; while the
// agent runs it reaps the daemon when it exits.
func (e *NBDExporter) start() error {
	_ = os.Remove(e.sockPath())
	if err := e.writeTLSDir(); err != nil {
		return err
	}
	logf, err := os.OpenFile(filepath.Join(e.cfg.StateDir, "qsd.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("NBD export daemon log: %w", err)
	}
	defer logf.Close()
	cmd := exec.Command(e.bin, "--chardev", "socket,id=qmp,server=on,wait=off,path="+strings.ReplaceAll(e.sockPath(), ",", ",,"),
		"--monitor", "chardev=qmp", "--pidfile", e.pidPath())
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", e.bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		select {
		case err := <-exited:
			return fmt.Errorf("%s exited at start (%v); see %s", e.bin, err, logf.Name())
		case <-time.After(20 * time.Millisecond):
		}
		if _, err := os.Stat(e.pidPath()); err == nil {
			if _, err := os.Stat(e.sockPath()); err == nil {
				return nil
			}
		}
	}
	_ = cmd.Process.Kill()
	return fmt.Errorf("%s did not open its monitor within 10 s; see %s", e.bin, logf.Name())
}

// serve gives the daemon its TLS credentials (the agent's certificate,
// clients' certificates checked against the CA), an authorisation that
// admits no one yet (authorise fills it), and starts its NBD server;
// what it has already is kept.
func (e *NBDExporter) serve() error {
	e.admitted = nil
	host, port, err := net.SplitHostPort(e.cfg.Address)
	if err != nil {
		return fmt.Errorf("nbd_address %q: %w", e.cfg.Address, err)
	}
	steps := []struct {
		cmd  string
		args map[string]any
	}{
		{"object-add", map[string]any{"qom-type": "tls-creds-x509", "id": tlsObjectID,
			"dir": e.tlsDir(), "endpoint": "server", "verify-peer": true}},
		{"object-add", authzList([]map[string]any{})},
		{"nbd-server-start", map[string]any{"addr": map[string]any{"type": "inet",
			"data": map[string]any{"host": host, "port": port}}, "tls-creds": tlsObjectID, "tls-authz": authzObjectID}},
	}
	for _, s := range steps {
		err := e.q.run(s.cmd, s.args, nil)
		// An adopted daemon has them already.
		if err != nil && !(refused(err) && (strings.Contains(err.Error(), "uplicate") || strings.Contains(err.Error(), "already"))) {
			return fmt.Errorf("NBD export daemon: %w", err)
		}
	}
	return nil
}

func (e *NBDExporter) tlsDir() string { return filepath.Join(e.cfg.StateDir, "tls") }

// writeTLSDir copies the agent's CA, certificate and key under the
// names QEMU's tls-creds-x509 reads.
func (e *NBDExporter) writeTLSDir() error {
	if err := os.MkdirAll(e.tlsDir(), 0o700); err != nil {
		return fmt.Errorf("NBD TLS directory: %w", err)
	}
	for src, name := range map[string]string{e.cfg.CAFile: "ca-cert.pem", e.cfg.CertFile: "server-cert.pem", e.cfg.KeyFile: "server-key.pem"} {
		b, err := os.ReadFile(src)
		if err != nil {
			return fmt.Errorf("NBD TLS: %w", err)
		}
		if err := os.WriteFile(filepath.Join(e.tlsDir(), name), b, 0o600); err != nil {
			return fmt.Errorf("NBD TLS: %w", err)
		}
	}
	return nil
}

// stopDaemon asks the daemon to quit and waits for it to go; one that
// does not is killed.
func (e *NBDExporter) stopDaemon() error {
	if e.q == nil {
		if q, err := dialQMP(e.sockPath()); err == nil {
			e.q = q
		}
	}
	if e.q != nil {
		_ = e.q.run("quit", nil, nil)
		e.q.close()
		e.q = nil
	}
	return e.kill()
}

// kill ends the daemon the pid file names, if it still runs, and
// removes the pid file and socket.
func (e *NBDExporter) kill() error {
	pid := e.daemonPid()
	if pid > 0 {
		deadline := time.Now().Add(10 * time.Second)
		for alive(pid) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if alive(pid) {
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
				return fmt.Errorf("kill the NBD export daemon %d: %w", pid, err)
			}
			for i := 0; i < 100 && alive(pid); i++ {
				time.Sleep(50 * time.Millisecond)
			}
		}
	}
	for _, f := range []string{e.pidPath(), e.sockPath()} {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// daemonPid is the pid the pid file names, if that process is a
// qemu-storage-daemon; 0 otherwise.
func (e *NBDExporter) daemonPid() int {
	b, err := os.ReadFile(e.pidPath())
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0
	}
	comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	// comm is the name cut at 15 bytes.
	if c := strings.TrimSpace(string(comm)); err != nil || c == "" || !strings.HasPrefix("qemu-storage-daemon", c) {
		return 0
	}
	return pid
}

// alive reports whether pid runs (a zombie does not).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] != 'Z' && s[i+2] != 'X'
}
