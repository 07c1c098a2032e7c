package storage

import (
	"fmt"
	"slices"
	"strings"

	"github.com/stratus-cloud/stratus/tlsutil"
)

// authzList is the daemon's authorisation object (QEMU's authz-list):
// it refuses every client but those its rules allow. The NBD server
// looks it up by id at each TLS handshake, so changing its rules (or
// replacing it) takes effect for the next connection; connections
// already open are kept.
func authzList(rules []map[string]any) map[string]any {
	return map[string]any{"qom-type": "authz-list", "id": authzObjectID, "policy": "deny", "rules": rules}
}

// admittedSubjects are the subjects the daemon admits for e.want: the
// certificates of the hosts its exports name, and the shared subject
// while an upgrade keeps it. e.mu is held.
func (e *NBDExporter) admittedSubjects() []string {
	var out []string
	if e.cfg.SharedClientDN != "" {
		out = append(out, e.cfg.SharedClientDN)
	}
	for _, x := range e.want {
		for _, h := range x.Hosts {
			dn := "CN=" + tlsutil.HostClientName(h, e.cfg.Region, e.cfg.Domain)
			if !slices.Contains(out, dn) {
				out = append(out, dn)
			}
		}
	}
	slices.Sort(out)
	return out
}

// authorise sets the daemon's admitted subjects to admittedSubjects.
// A daemon started by an agent before per-host certificates has an
// authz-simple object of the same id: it is replaced by a list. e.mu
// is held and the daemon runs.
func (e *NBDExporter) authorise() error {
	want := e.admittedSubjects()
	if e.admitted != nil && slices.Equal(want, e.admitted) {
		return nil
	}
	rules := make([]map[string]any, 0, len(want))
	for _, dn := range want {
		rules = append(rules, map[string]any{"match": dn, "policy": "allow", "format": "exact"})
	}
	err := e.q.run("qom-set", map[string]any{"path": "/objects/" + authzObjectID, "property": "rules", "value": rules}, nil)
	if err != nil && refused(err) && strings.Contains(err.Error(), "not found") {
		e.log.Info("NBD exports: replacing the shared-subject authorisation by the hosts' list")
		if err = e.q.run("object-del", map[string]any{"id": authzObjectID}, nil); err == nil || strings.Contains(err.Error(), "not found") {
			err = e.q.run("object-add", authzList(rules), nil)
		}
	}
	if err != nil {
		return fmt.Errorf("NBD exports: admit %v: %w", want, err)
	}
	e.admitted = want
	e.log.Debug("NBD exports: admitted client certificates", "subjects", want)
	return nil
}
