package fake

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/stratus-cloud/stratus/virt"
)

// Open returns a fake driver whose instances live in the JSON file at
// cfg.StatePath, so they outlive the agent process as a real
// hypervisor's guests do (dev mode uses it). The file is created if
// missing and rewritten atomically after every change.
func Open(cfg Config) (*Driver, error) {
	if cfg.StatePath == "" {
		return nil, errors.New("fake: Open needs a StatePath")
	}
	d := New(cfg)
	d.persistent = true
	raw, err := os.ReadFile(cfg.StatePath)
	if errors.Is(err, os.ErrNotExist) {
		return d, nil
	}
	if err != nil {
		return nil, fmt.Errorf("fake: read state: %w", err)
	}
	var st persistedState
	if err := json.Unmarshal(raw, &st); err != nil {
		return nil, fmt.Errorf("fake: state file %s is corrupt: %w", cfg.StatePath, err)
	}
	d.serial = st.Serial
	for _, p := range st.Instances {
		if p.Spec.ID == "" {
			return nil, fmt.Errorf("fake: state file %s has an instance without id", cfg.StatePath)
		}
		d.instances[p.Spec.ID] = &instance{spec: p.Spec, power: p.Power, n: p.N, boots: p.Boots,
			rescued: p.Rescued, rescueImage: p.RescueImage, rescueDevice: p.RescueDevice, rescueBus: p.RescueBus, disks: p.Disks,
			attempt: p.Attempt}
	}
	return d, nil
}

type persistedState struct {
	Serial    int
	Instances []persistedInstance
}

type persistedInstance struct {
	Spec  virt.InstanceSpec
	Power int
	N     int
	Boots int
	// Rescued and RescueImage are absent from files written before
	// rescue existed, which decode as not rescued.
	Rescued     bool   `json:",omitempty"`
	RescueImage string `json:",omitempty"`
	// RescueDevice and RescueBus are a stable rescue's layout.
	RescueDevice string `json:",omitempty"`
	RescueBus    string `json:",omitempty"`
	// Disks are the disks' contents (disks.go), by role.
	Disks map[string][]byte `json:",omitempty"`
	// Attempt names the instance's files on shared storage (shared.go).
	Attempt string `json:",omitempty"`
}

// saveLocked writes the instances to StatePath, if set; callers hold d.mu.
func (d *Driver) saveLocked() error {
	path := d.cfg.StatePath
	if path == "" || !d.persistent {
		return nil
	}
	st := persistedState{Serial: d.serial}
	for _, in := range d.instances {
		st.Instances = append(st.Instances, persistedInstance{Spec: in.spec, Power: in.power, N: in.n, Boots: in.boots,
			Rescued: in.rescued, RescueImage: in.rescueImage, RescueDevice: in.rescueDevice, RescueBus: in.rescueBus,
			Disks: cloneDisks(in.disks), Attempt: in.attempt})
	}
	raw, err := json.Marshal(&st)
	if err != nil {
		return fmt.Errorf("fake: encode state: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("fake: state dir: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, raw, 0o600); err != nil {
		return fmt.Errorf("fake: write state: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("fake: replace state: %w", err)
	}
	return nil
}
