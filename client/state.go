package client

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/google/uuid"
	bolt "go.etcd.io/bbolt"
)

// stateFile is the name of the bbolt file under Config.DataDir.
const stateFile = "state.db"

var (
	metaBucket   = []byte("meta")
	allocsBucket = []byte("allocs")
	hostIDKey    = []byte("host_id")
)

// allocState is what the agent remembers about one allocation across
// restarts. It is comparable, so a runner writes it only when it changed.
type allocState struct {
	// InstanceID is the driver's id of the allocation's instance.
	InstanceID string
	// Spawned is set once Spawn succeeded (or the instance was found on
	// the hypervisor): from then on the instance is never spawned again,
	// and its absence means it disappeared.
	Spawned bool
	// ActionDoneSeq is the last ActionSeq carried out, and ActionError
	// why it failed ("" if it did not): kept so that a report lost to a
	// restart is sent again, and the action is never repeated.
	ActionDoneSeq uint64
	ActionError   string
	// HandledIndex is the last AllocModifyIndex acted upon: a desired
	// state is enforced (power on) only when it is newer, so a guest that
	// shut itself down is not restarted behind the user's back.
	HandledIndex uint64
	// The state last reported.
	ClientState       string
	ClientDescription string
	PowerState        int

	// RebuildSeq is the ActionSeq of a rebuild in progress, recorded
	// before the old instance is destroyed, so that a restart finishes
	// the rebuild instead of reporting the instance disappeared.
	// RebuildDestroyed says the old instance is gone: an instance found
	// from then on is the new one, never destroyed again.
	RebuildSeq       uint64
	RebuildDestroyed bool
	// MigrateSeq is the ActionSeq of a live migration in progress: a
	// restart that finds the instance gone takes it as migrated.
	MigrateSeq uint64
	// MigratedAway is set once the instance left for another host: its
	// absence is expected, and it is never spawned, powered or
	// destroyed here again under this allocation.
	MigratedAway bool
	// Rescued is set while the instance runs from a rescue image: it is
	// left running, even when desired stopped, until it is unrescued or
	// a new stop is asked for.
	Rescued bool
	// ResizedFrom is the size of the flavor the instance had before this
	// allocation, a same-host resize's destination, resized it in place
	// (resize.go); zero if it did not. A revert resizes it back.
	ResizedFrom flavorSize
}

// stateDB is the agent's local bbolt store.
type stateDB struct {
	db *bolt.DB
}

// openState opens (creating if need be) dir/state.db.
func openState(dir string) (*stateDB, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create data dir: %w", err)
	}
	path := filepath.Join(dir, stateFile)
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		return nil, fmt.Errorf("open %s (is another agent using this data dir?): %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{metaBucket, allocsBucket} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("initialise %s: %w", path, err)
	}
	return &stateDB{db: db}, nil
}

// hostID returns the persisted host id, creating a new UUID the first time.
func (s *stateDB) hostID() (string, error) {
	var id string
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(metaBucket)
		if v := b.Get(hostIDKey); len(v) > 0 {
			id = string(v)
			return nil
		}
		id = uuid.NewString()
		return b.Put(hostIDKey, []byte(id))
	})
	return id, err
}

// getAlloc reads one allocation's state; ok is false when there is none.
func (s *stateDB) getAlloc(allocID string) (st allocState, ok bool, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(allocsBucket).Get([]byte(allocID))
		if v == nil {
			return nil
		}
		ok = true
		return json.Unmarshal(v, &st)
	})
	if err != nil {
		return allocState{}, false, fmt.Errorf("read state of allocation %s: %w", allocID, err)
	}
	return st, ok, nil
}

// putAlloc writes one allocation's state.
func (s *stateDB) putAlloc(allocID string, st allocState) error {
	buf, err := json.Marshal(st)
	if err != nil {
		return err
	}
	err = s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(allocsBucket).Put([]byte(allocID), buf)
	})
	if err != nil {
		return fmt.Errorf("write state of allocation %s: %w", allocID, err)
	}
	return nil
}

// deleteAlloc forgets one allocation.
func (s *stateDB) deleteAlloc(allocID string) error {
	err := s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(allocsBucket).Delete([]byte(allocID))
	})
	if err != nil {
		return fmt.Errorf("delete state of allocation %s: %w", allocID, err)
	}
	return nil
}

// allocs returns the state of every allocation the agent remembers.
func (s *stateDB) allocs() (map[string]allocState, error) {
	out := make(map[string]allocState)
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(allocsBucket).ForEach(func(k, v []byte) error {
			var st allocState
			if err := json.Unmarshal(v, &st); err != nil {
				return fmt.Errorf("allocation %s: %w", k, err)
			}
			out[string(k)] = st
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("list allocation states: %w", err)
	}
	return out, nil
}

// close closes the bbolt file.
func (s *stateDB) close() error {
	return s.db.Close()
}
