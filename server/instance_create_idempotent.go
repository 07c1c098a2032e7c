package server

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// Idempotent creates. A create with an idempotency key (the client's
// Idempotency-Key header, or a key the agent chose and keeps across its
// own retries) is applied at most once per project and key: the state
// machine records the key with what it created (fsm/create_requests.go),
// and a second create with the same key — sent again because a leader
// election lost the first answer — gets the first one's instances. This
// file has the endpoint's side: the answer from a record, and the
// leader's purge of old records (run by state_purge.go).

// createFingerprint summarises what a create asks for, so that a key
// reused for another request is refused instead of answered with the
// first request's instances.
func createFingerprint(args *structs.InstanceCreateRequest) string {
	count := max(args.Count, 1)
	sum := sha256.Sum256(fmt.Appendf(nil, "%q\x00%q\x00%q\x00%d", args.Name, args.FlavorID, args.ImageID, count))
	return hex.EncodeToString(sum[:16])
}

// createdBefore answers a create whose key the state already holds
// (done is true); otherwise the create goes on. The state machine
// checks again when the entry applies, which covers an earlier attempt
// still in flight.
func (s *Server) createdBefore(args *structs.InstanceCreateRequest, reply *structs.InstanceCreateResponse) (bool, error) {
	if args.IdempotencyKey == "" {
		return false, nil
	}
	if err := structs.ValidateIdempotencyKey(args.IdempotencyKey); err != nil {
		return true, err
	}
	rec, err := s.fsm.State().CreateRequestByKey(nil, args.ProjectID, args.IdempotencyKey)
	if err != nil || rec == nil {
		return err != nil, err
	}
	if rec.Fingerprint != createFingerprint(args) {
		return true, structs.Errorf(structs.KindConflict,
			"Idempotency-Key %q was already used for a different request", args.IdempotencyKey)
	}
	return true, s.replyCreated(rec, reply)
}

// replyCreated fills a create's answer from the record of the create
// that first used its key: its instances as they are now (one deleted
// since shows as deleted), its evaluation and its index.
func (s *Server) replyCreated(rec *structs.CreateRequest, reply *structs.InstanceCreateResponse) error {
	state := s.fsm.State()
	reply.Index, reply.EvalID, reply.Instances = rec.CreateIndex, rec.EvalID, nil
	for _, id := range rec.InstanceIDs {
		inst, err := state.InstanceByID(nil, id)
		if err != nil {
			return err
		}
		if inst == nil {
			inst = &structs.Instance{ID: id, ProjectID: rec.ProjectID, ReservationID: rec.ReservationID,
				VMState: structs.VMStateDeleted}
		}
		reply.Instances = append(reply.Instances, inst)
	}
	if len(reply.Instances) == 0 {
		return structs.Errorf(structs.KindInternal, "create request %q recorded no instances", rec.Key)
	}
	return nil
}

// purgeCreateRequests proposes a purge of the records older than
// structs.CreateRequestTTL at now, when there is one, so an idle cluster
// writes nothing. The entry carries the cut-off: every replica removes
// the same records. It is ignorable: a server too old to know it keeps
// the records, which only costs it memory.
func (s *Server) purgeCreateRequests(now time.Time) error {
	before := now.Add(-s.config.IdempotencyKeyTTL).UnixNano()
	recs, err := s.fsm.State().CreateRequests(nil)
	if err != nil {
		return err
	}
	old := slices.ContainsFunc(recs, func(r *structs.CreateRequest) bool { return r.CreatedAt < before })
	if !old {
		// Task submissions' keys share the purge (fsm/conductor_requests.go).
		tasks, err := s.fsm.State().TaskRequests(nil)
		if err != nil {
			return err
		}
		old = slices.ContainsFunc(tasks, func(r *structs.TaskRequest) bool { return r.CreatedAt < before })
	}
	if !old {
		return nil
	}
	_, err = s.apply(structs.CreateRequestPurgeType|structs.IgnoreUnknownTypeFlag,
		&structs.CreateRequestPurgeEntry{Before: before})
	return err
}
