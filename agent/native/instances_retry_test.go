package native

import (
	"errors"
	"testing"

	"github.com/stratus-cloud/stratus/structs"
)

func TestNativeCreateRetriesAnElectionWithItsIdempotencyKey(t *testing.T) {
	t.Parallel()
	h, f := electionRoutes("Instance.Create", 2, "InstanceCreate: no leader: raft apply: node is not the leader", func(reply any) {
		if out, ok := reply.(*structs.InstanceCreateResponse); ok {
			out.Instances = []*structs.Instance{{ID: "i1", Name: "web"}}
		}
	})
	checkKeyedRetries(t, h, f, "create", "/v1/instances", `{"Name":"web","Flavor":"1"}`, "", `{"Name":"web","Flavor":"1"}`)
	// A refusal is not retried.
	h, f = retryRoutes(func(method string, _, _ any) error {
		return structs.Errorf(structs.KindQuotaReached, "Quota exceeded for instances")
	})
	if rec := serve(h, "POST", "/v1/instances", `{"Name":"web","Flavor":"1"}`); rec.Code != 403 || f.count() != 1 {
		t.Fatalf("quota refusal: %d after %d attempts", rec.Code, f.count())
	}
}

func TestNativeDeleteWhoseAnswerWasLostSucceeds(t *testing.T) {
	t.Parallel()
	calls := 0
	h, _ := retryRoutes(func(method string, _, _ any) error {
		calls++
		if calls == 1 {
			return errors.New("InstanceDelete: no leader: raft apply: leadership lost while committing log")
		}
		return structs.Errorf(structs.KindNotFound, "Instance i1 could not be found.")
	})
	if rec := serve(h, "DELETE", "/v1/instances/i1", ""); rec.Code != 200 || calls != 2 {
		t.Fatalf("delete answered %d after %d calls", rec.Code, calls)
	}
}
