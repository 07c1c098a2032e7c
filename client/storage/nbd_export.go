package storage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// Export is one attachment's NBD export: the volume file it serves, by
// the name the attaching host opens (structs.VolumeExportName), and the
// names of the hosts that may open it (the attachment's Host and
// MoveHost): the daemon admits their certificates
// (tlsutil.HostClientName).
type Export struct {
	Name  string
	Path  string
	Hosts []string `json:",omitempty"`
}

func (x Export) equal(y Export) bool {
	return x.Name == y.Name && x.Path == y.Path && slices.Equal(x.Hosts, y.Hosts)
}

// Exporter serves the exports of the attachments of this host's volumes
// to instances on other hosts. Sync makes the served set want.
type Exporter interface {
	Sync(ctx context.Context, want []Export) error
}

// NBDConfig configures an NBDExporter.
type NBDConfig struct {
	// StateDir keeps the daemon's monitor socket, pid file and TLS
	// files, and the record of the exports (exports.json).
	StateDir string
	// Address is where the NBD server listens, host:port; the storage
	// host advertises it (structs.HostAttrStorageNBDAddress).
	Address string
	// CAFile, CertFile and KeyFile are the agent's TLS files: the
	// server presents the certificate, and clients must present one the
	// CA signed.
	CAFile, CertFile, KeyFile string
	// Region and Domain make up the names of the hosts' certificates
	// (tlsutil.HostClientName): the daemon admits
	// "CN=<host>.client.<region>.<domain>" for the hosts of its exports.
	Region, Domain string
	// SharedClientDN, when set, is admitted to every export besides the
	// hosts' own certificates: the subject all client agents shared
	// before per-host certificates ("CN=client.global.stratus"), for
	// the upgrade only.
	SharedClientDN string
	Logger         hclog.Logger
	// Every is how often the daemon is checked and repaired (default 5 s).
	Every time.Duration
}

// NBDExporter keeps the exports of this host's attachments in one
// qemu-storage-daemon: an NBD server with TLS (x509, client certificates
// required and checked against the CA, then against the subjects of the
// hosts that use the exports: QEMU authorises per NBD server, not per
// export, so a host that uses one export here could open another
// whose name it knows), and one
// export per attachment, each a qcow2 node of the volume file. The
// wanted exports are recorded in the state directory before they are
// applied, so an agent that restarts serves them again at once, and the
// daemon is checked every few seconds: one that died is started again
// with every export. The daemon runs only while an export is wanted;
// Sync with none stops it.
type NBDExporter struct {
	cfg NBDConfig
	bin string
	log hclog.Logger

	mu   sync.Mutex
	want []Export
	q    *qmp
	// admitted is the daemon's list of admitted subjects as last set;
	// nil when it is not known (a new or adopted daemon).
	admitted []string
}

// exportsFile records the wanted exports.
const exportsFile = "exports.json"

// NewNBDExporter checks cfg and qemu-storage-daemon (qemu-system-common)
// and reads the recorded exports.
func NewNBDExporter(cfg NBDConfig) (*NBDExporter, error) {
	if cfg.StateDir == "" || cfg.Address == "" || cfg.CAFile == "" || cfg.CertFile == "" || cfg.KeyFile == "" {
		return nil, errors.New("NBD exports: a state directory, an address and the TLS files (CA, certificate, key) are required")
	}
	bin, err := exec.LookPath("qemu-storage-daemon")
	if err != nil {
		return nil, fmt.Errorf("NBD exports: qemu-storage-daemon (qemu-system-common) is required: %w", err)
	}
	if err := os.MkdirAll(cfg.StateDir, 0o700); err != nil {
		return nil, fmt.Errorf("NBD exports: %w", err)
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if cfg.Every <= 0 {
		cfg.Every = 5 * time.Second
	}
	e := &NBDExporter{cfg: cfg, bin: bin, log: cfg.Logger}
	b, err := os.ReadFile(filepath.Join(cfg.StateDir, exportsFile))
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("NBD exports: %w", err)
	default:
		if err := json.Unmarshal(b, &e.want); err != nil {
			return nil, fmt.Errorf("NBD exports: %s: %w", exportsFile, err)
		}
	}
	return e, nil
}

// Sync records want and makes the daemon serve exactly it.
func (e *NBDExporter) Sync(_ context.Context, want []Export) error {
	want = slices.Clone(want)
	for i := range want {
		want[i].Hosts = slices.Clone(want[i].Hosts)
		slices.Sort(want[i].Hosts)
	}
	slices.SortFunc(want, func(a, b Export) int { return strings.Compare(a.Name, b.Name) })
	e.mu.Lock()
	defer e.mu.Unlock()
	if !slices.EqualFunc(want, e.want, Export.equal) {
		b, err := json.Marshal(want)
		if err != nil {
			return err
		}
		tmp := filepath.Join(e.cfg.StateDir, exportsFile+".tmp")
		if err := os.WriteFile(tmp, b, 0o600); err != nil {
			return fmt.Errorf("record the NBD exports: %w", err)
		}
		if err := os.Rename(tmp, filepath.Join(e.cfg.StateDir, exportsFile)); err != nil {
			return fmt.Errorf("record the NBD exports: %w", err)
		}
		e.want = want
	}
	return e.apply()
}

// Run applies the recorded exports, then checks and repairs the daemon
// every cfg.Every until ctx ends. The daemon keeps running after that
// (Stop ends it): the guests that read its exports go on while the
// agent restarts.
func (e *NBDExporter) Run(ctx context.Context) {
	t := time.NewTicker(e.cfg.Every)
	defer t.Stop()
	for {
		e.mu.Lock()
		if err := e.apply(); err != nil {
			e.log.Warn("NBD exports: repair failed; trying again", "error", err, "retry_in", e.cfg.Every)
		}
		e.mu.Unlock()
		select {
		case <-ctx.Done():
			e.mu.Lock()
			if e.q != nil {
				e.q.close()
				e.q = nil
			}
			e.mu.Unlock()
			return
		case <-t.C:
		}
	}
}

// Stop ends the daemon and forgets the exports' record: nothing is
// served any more. For tests and for a host that stops being a
// storage host.
func (e *NBDExporter) Stop() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.want = nil
	if err := os.Remove(filepath.Join(e.cfg.StateDir, exportsFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return e.stopDaemon()
}

// exportID is the QEMU id of an export and of its volume's node: a
// digest of the export name, as node names are at most 31 characters.
func exportID(name string) string {
	sum := sha256.Sum256([]byte(name))
	return "sx" + hex.EncodeToString(sum[:])[:28]
}

// apply makes the daemon serve e.want: it starts (or adopts) the daemon
// when exports are wanted, stops it when none is, adds the exports it
// lacks and removes the ones no longer wanted. e.mu is held.
func (e *NBDExporter) apply() error {
	if len(e.want) == 0 {
		if e.q == nil && e.daemonPid() == 0 {
			return nil
		}
		e.log.Info("NBD exports: none wanted; stopping the daemon")
		return e.stopDaemon()
	}
	if err := e.daemon(); err != nil {
		return err
	}
	if err := e.authorise(); err != nil {
		return err
	}
	have, err := e.served()
	if err != nil {
		return err
	}
	wanted := map[string]bool{}
	var errs []error
	for _, x := range e.want {
		id := exportID(x.Name)
		wanted[id] = true
		if !have[id] {
			if err := e.add(id, x); err != nil {
				errs = append(errs, err)
			}
		}
	}
	for id := range have {
		if !wanted[id] {
			errs = append(errs, e.remove(id))
		}
	}
	return errors.Join(errs...)
}

// served are the ids of the daemon's exports and of its nodes (a node
// whose export is gone is removed like an export).
func (e *NBDExporter) served() (map[string]bool, error) {
	var exports []struct {
		ID string `json:"id"`
	}
	if err := e.q.run("query-block-exports", nil, &exports); err != nil {
		return nil, err
	}
	var nodes []struct {
		NodeName string `json:"node-name"`
	}
	if err := e.q.run("query-named-block-nodes", map[string]any{"flat": true}, &nodes); err != nil {
		return nil, err
	}
	have := map[string]bool{}
	for _, x := range exports {
		have[x.ID] = true
	}
	for _, n := range nodes {
		if strings.HasPrefix(n.NodeName, "sx") {
			have[n.NodeName] = true
		}
	}
	return have, nil
}

// add serves x: its file as a qcow2 node, exported writable under its
// name. A node left by an interrupted add is used as it is.
func (e *NBDExporter) add(id string, x Export) error {
	err := e.q.run("blockdev-add", map[string]any{"driver": "qcow2", "node-name": id,
		"file": map[string]any{"driver": "file", "filename": x.Path}}, nil)
	if err != nil && !(refused(err) && strings.Contains(err.Error(), "Duplicate")) {
		return fmt.Errorf("NBD export %s of %s: %w", x.Name, x.Path, err)
	}
	err = e.q.run("block-export-add", map[string]any{"type": "nbd", "id": id, "node-name": id,
		"name": x.Name, "writable": true}, nil)
	if err != nil {
		return fmt.Errorf("NBD export %s of %s: %w", x.Name, x.Path, err)
	}
	e.log.Info("NBD export added", "export", x.Name, "path", x.Path)
	return nil
}

// remove ends export id (disconnecting a client still on it: its
// attachment is gone) and then its node.
func (e *NBDExporter) remove(id string) error {
	err := e.q.run("block-export-del", map[string]any{"id": id, "mode": "hard"}, nil)
	if err != nil && !refused(err) {
		return err
	}
	// The export goes once its last request is done.
	for i := 0; i < 200; i++ {
		err = e.q.run("blockdev-del", map[string]any{"node-name": id}, nil)
		if err == nil || !refused(err) || strings.Contains(err.Error(), "Failed to find") {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil && !strings.Contains(err.Error(), "Failed to find") {
		return fmt.Errorf("remove NBD export %s: %w", id, err)
	}
	e.log.Info("NBD export removed", "id", id)
	return nil
}
