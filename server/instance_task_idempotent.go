package server

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"

	"github.com/stratus-cloud/stratus/structs"
)

// Idempotent task submissions. A task with an idempotency key (the
// client's Idempotency-Key header, or a key the agent chose and keeps
// across its own retries) is started at most once per project and key:
// the state machine records the key with the action it started
// (fsm/task_requests.go), and a second submission with the same key —
// sent again because a leader election lost the first answer — gets the
// first one's answer instead of a conflict with the task it started.
// The records are purged with the create requests'
// (purgeCreateRequests).

// taskFingerprint summarises what a task asks for, so that a key reused
// for another task is refused instead of answered with the first one.
// A snapshot's image is left out: the agent creates a new queued image
// for every submission, and a retry is answered with the first one's.
func taskFingerprint(args *structs.InstanceTaskRequest) string {
	image := args.ImageID
	if args.Op == structs.OpCreateImage || args.Op == structs.OpCreateBackup {
		image = ""
	}
	props := ""
	for _, k := range slices.Sorted(maps.Keys(args.ImageProperties)) {
		props += fmt.Sprintf("%q=%q,", k, args.ImageProperties[k])
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "%q\x00%q\x00%q\x00%q\x00%s\x00%q\x00%q\x00%q\x00%d",
		args.InstanceID, args.Op, args.FlavorID, image, props, args.TargetHost, args.Reason, args.State, args.Rotation))
	return hex.EncodeToString(sum[:16])
}

// taskIdempotency is the entry's record of a keyed submission, nil for
// one without a key.
func taskIdempotency(args *structs.InstanceTaskRequest) *structs.TaskIdempotency {
	if args.IdempotencyKey == "" {
		return nil
	}
	return &structs.TaskIdempotency{ProjectID: args.ProjectID, Key: args.IdempotencyKey, Fingerprint: taskFingerprint(args)}
}

// taskedBefore answers a submission whose key the state already holds
// (done is true); otherwise the submission goes on. The state machine
// checks again when the entry applies, which covers an earlier attempt
// still in flight.
func (s *Server) taskedBefore(args *structs.InstanceTaskRequest, reply *structs.InstanceTaskResponse) (bool, error) {
	if args.IdempotencyKey == "" {
		return false, nil
	}
	if err := structs.ValidateIdempotencyKey(args.IdempotencyKey); err != nil {
		return true, err
	}
	rec, err := s.fsm.State().TaskRequestByKey(nil, args.ProjectID, args.IdempotencyKey)
	if err != nil || rec == nil {
		return err != nil, err
	}
	if rec.Fingerprint != taskFingerprint(args) {
		return true, structs.Errorf(structs.KindConflict,
			"Idempotency-Key %q was already used for a different request", args.IdempotencyKey)
	}
	return true, s.replyTasked(rec, reply)
}

// replyTasked fills a task's answer from the record of the submission
// that first used its key: its action, migration, image and index, and
// the instance as it is now (nil once deleted).
func (s *Server) replyTasked(rec *structs.TaskRequest, reply *structs.InstanceTaskResponse) error {
	inst, err := s.fsm.State().InstanceByID(nil, rec.InstanceID)
	if err != nil {
		return err
	}
	reply.Index, reply.RequestID, reply.MigrationID, reply.ImageID = rec.CreateIndex, rec.RequestID, rec.MigrationID, rec.ImageID
	reply.Instance = inst
	return nil
}
