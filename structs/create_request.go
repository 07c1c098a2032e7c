package structs

import (
	"fmt"
	"time"
	"unicode"
)

// CreateRequestTTL is how long the state remembers a create's
// idempotency key: a retry with the same key within it gets the first
// create's instances instead of new ones. The leader purges older
// records (CreateRequestPurgeEntry). It is the default of the servers'
// idempotency_key_ttl.
const CreateRequestTTL = time.Hour

// MaxIdempotencyKeyLen bounds an idempotency key.
const MaxIdempotencyKeyLen = 255

// CreateIdempotency ties an InstanceCreateEntry to its client's
// idempotency key. The state machine applies at most one create per
// project and key: a later entry with the same key creates nothing and
// answers the first one's record (CreateReplay).
type CreateIdempotency struct {
	Key string
	// Fingerprint summarises what was asked (name, flavor, image,
	// count), so that a key reused for a different request is refused
	// rather than answered with another request's instances.
	Fingerprint string
}

// CreateRequest is the record of one committed create by idempotency
// key: which instances and evaluation it made, and when. ID is
// CreateRequestID(ProjectID, Key).
type CreateRequest struct {
	ID          string
	ProjectID   string
	Key         string
	Fingerprint string
	InstanceIDs []string
	EvalID      string
	// ReservationID is the instances' reservation (Nova's
	// return_reservation_id answer).
	ReservationID string
	// CreatedAt is the create entry's timestamp (chosen by the leader
	// before proposal), which the purge compares against.
	CreatedAt   int64
	CreateIndex uint64
	ModifyIndex uint64
}

// CreateRequestID is the state's key of a create request record: keys
// are per project.
func CreateRequestID(projectID, key string) string {
	return projectID + "\x00" + key
}

// CreateRequestPurgeEntry removes the create request records created
// before Before (CreateRequestPurgeType). The leader proposes it with
// Before = now - CreateRequestTTL, so every replica removes the same
// records whatever its own clock says.
type CreateRequestPurgeEntry struct {
	Before int64
}

// CreateReplay is the state machine's answer to a create whose
// idempotency key was already used in its project: nothing was written,
// and Request is the first create's record. It is an error value so
// that it travels where a create's refusal does (a batch's per-create
// results), but it means success: the caller answers with Request's
// instances.
type CreateReplay struct {
	Request *CreateRequest
}

func (r *CreateReplay) Error() string {
	return fmt.Sprintf("create with idempotency key %q was already applied at index %d", r.Request.Key, r.Request.CreateIndex)
}

// ValidateIdempotencyKey checks a client's idempotency key: 1-255
// printable characters.
func ValidateIdempotencyKey(key string) error {
	if key == "" || len(key) > MaxIdempotencyKeyLen {
		return Errorf(KindInvalid, "Idempotency-Key must be 1-%d characters", MaxIdempotencyKeyLen)
	}
	for _, r := range key {
		if !unicode.IsPrint(r) {
			return Errorf(KindInvalid, "Idempotency-Key must be printable characters")
		}
	}
	return nil
}
