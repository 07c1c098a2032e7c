package storage

import (
	"context"
	"path/filepath"
	"slices"

	"github.com/stratus-cloud/stratus/structs"
)

// wantExports are the exports the volumes ask of this host: one for
// every attachment the Compute API made to an instance on another
// host, or reached through its export on this host after a move, or
// used by a move's other host (MoveHost), of a volume kept as a file
// here, whatever the volume's status: an attachment is served from the
// moment the servers record it (attaching) until the detach is done and
// it is gone, and while a move needs it. Each export names the hosts
// that may open it, by the names in hostNames (the attachment's Host
// and MoveHost); a host whose name is not known is left out, so it is
// refused.
func wantExports(hostID string, vols []*structs.Volume, hostNames map[string]string) []Export {
	var out []Export
	for _, v := range vols {
		if v.Host != hostID || !filepath.IsAbs(v.ProviderLocation) {
			continue
		}
		for _, att := range v.Attachments {
			// A record the Block Storage API's caller drives
			// (External) is not the Compute API's: no agent opens it.
			if !att.External && (att.Exported || att.MoveExported || remote(att.Host, hostID) || remote(att.MoveHost, hostID)) {
				x := Export{Name: structs.VolumeExportName(v.ID, att.ID), Path: v.ProviderLocation}
				for _, h := range []string{att.Host, att.MoveHost} {
					if name := hostNames[h]; h != "" && name != "" && !slices.Contains(x.Hosts, name) {
						x.Hosts = append(x.Hosts, name)
					}
				}
				out = append(out, x)
			}
		}
	}
	return out
}

// remote reports whether host is a compute host other than this one.
func remote(host, hostID string) bool {
	return host != "" && host != hostID
}

// syncExports hands the wanted exports to the exporter. A failure is
// only logged: the exporter repairs itself, and the volumes' work must
// not wait for it.
func (a *Agent) syncExports(ctx context.Context, vols []*structs.Volume, hostNames map[string]string) {
	if a.cfg.Exports == nil {
		return
	}
	if err := a.cfg.Exports.Sync(ctx, wantExports(a.cfg.HostID, vols, hostNames)); err != nil {
		a.log.Warn("NBD exports not in step; the exporter tries again", "error", err)
	}
}
