package fsm

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

// attachedHostIndex indexes a volume by the hosts of its Compute API
// attachments (an external attachment is no agent's), so that a compute
// agent's watch on the volumes of its instances is woken by their
// changes only, not by every volume write in the cluster.
type attachedHostIndex struct{}

// FromObject gives the hosts of raw's attachments, each once.
func (attachedHostIndex) FromObject(raw any) (bool, [][]byte, error) {
	v, ok := raw.(*structs.Volume)
	if !ok {
		return false, nil, fmt.Errorf("attached_host index: %T is not a volume", raw)
	}
	var out [][]byte
	seen := map[string]bool{}
	for _, a := range v.Attachments {
		if a.External || a.Host == "" || seen[a.Host] {
			continue
		}
		seen[a.Host] = true
		out = append(out, []byte(a.Host+"\x00"))
	}
	return len(out) > 0, out, nil
}

// FromArgs gives the key of one host id.
func (attachedHostIndex) FromArgs(args ...any) ([]byte, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("attached_host index: one host id, not %d arguments", len(args))
	}
	host, ok := args[0].(string)
	if !ok {
		return nil, fmt.Errorf("attached_host index: %T is not a host id", args[0])
	}
	return []byte(host + "\x00"), nil
}

// VolumesAttachedTo lists the volumes the Compute API attached to
// instances on hostID.
func (s *StateStore) VolumesAttachedTo(ws memdb.WatchSet, hostID string) ([]*structs.Volume, error) {
	return list[*structs.Volume](s.ReadTxn(), ws, TableVolumes, "attached_host", hostID)
}
