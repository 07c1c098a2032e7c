package loadtest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/hashicorp/go-msgpack/v2/codec"

	"github.com/stratus-cloud/stratus/structs"
)

// StateBreakdown is the replicated state by snapshot record type: how
// many records and how many bytes each kind takes, read from the
// leader's snapshot (GET /v1/operator/snapshot). It shows what a Raft
// snapshot holds besides the live instances.
type StateBreakdown struct {
	Total   int64
	Records map[structs.SnapshotType]int
	Bytes   map[structs.SnapshotType]int64
}

// recordNames names the record types a churn changes.
var recordNames = map[structs.SnapshotType]string{
	structs.InstanceSnapshot:       "instances",
	structs.AllocationSnapshot:     "allocations",
	structs.EvalSnapshot:           "evaluations",
	structs.InstanceActionSnapshot: "instance actions",
	structs.InstanceUsageSnapshot:  "deleted-instance usage",
	structs.CreateRequestSnapshot:  "create requests (idempotency keys)",
	structs.HostSnapshot:           "hosts",
	structs.IndexSnapshot:          "table indexes",
}

// readState fetches the leader's snapshot and counts its records.
func readState(ctx context.Context, hc *http.Client, base, admin string) (*StateBreakdown, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", base+"/v1/operator/snapshot", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("X-Auth-Token", admin)
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("snapshot: status %d: %.200s", resp.StatusCode, data)
	}
	return breakdown(data)
}

// breakdown walks a snapshot stream: [type][version][msgpack] records.
func breakdown(data []byte) (*StateBreakdown, error) {
	b := &StateBreakdown{Total: int64(len(data)), Records: map[structs.SnapshotType]int{}, Bytes: map[structs.SnapshotType]int64{}}
	r := bytes.NewReader(data)
	dec := codec.NewDecoder(r, structs.MsgpackHandle)
	for r.Len() > 0 {
		start := r.Len()
		var frame [2]byte
		if _, err := io.ReadFull(r, frame[:]); err != nil {
			return nil, fmt.Errorf("snapshot record header: %w", err)
		}
		var skip any
		if err := dec.Decode(&skip); err != nil {
			return nil, fmt.Errorf("snapshot record of type %d: %w", frame[0], err)
		}
		t := structs.SnapshotType(frame[0])
		b.Records[t]++
		b.Bytes[t] += int64(start - r.Len())
	}
	return b, nil
}

// compareStates prints the state at start and end, by record type.
func compareStates(w io.Writer, a, b *StateBreakdown) {
	if a == nil || b == nil {
		fmt.Fprintln(w, "state breakdown: not available")
		return
	}
	fmt.Fprintf(w, "\nreplicated state (leader's snapshot): %s -> %s\n", mib(a.Total), mib(b.Total))
	var types []structs.SnapshotType
	for t := range b.Records {
		types = append(types, t)
	}
	for t := range a.Records {
		if _, ok := b.Records[t]; !ok {
			types = append(types, t)
		}
	}
	slices.SortFunc(types, func(x, y structs.SnapshotType) int { return int(b.Bytes[y]-a.Bytes[y]) - int(b.Bytes[x]-a.Bytes[x]) })
	var other []string
	for _, t := range types {
		name, ok := recordNames[t]
		if !ok && a.Records[t] == b.Records[t] {
			other = append(other, fmt.Sprint(uint8(t)))
			continue
		}
		if !ok {
			name = fmt.Sprintf("record type %d", t)
		}
		fmt.Fprintf(w, "  %-36s %8d -> %-8d records  %9s -> %s\n", name, a.Records[t], b.Records[t],
			kib(a.Bytes[t]), kib(b.Bytes[t]))
	}
	if len(other) > 0 {
		fmt.Fprintf(w, "  unchanged record types: %s\n", strings.Join(other, " "))
	}
}

// stateLine is a one-line summary of the records churn leaves behind,
// for the periodic samples.
func stateLine(b *StateBreakdown) string {
	return fmt.Sprintf("%s: instances %d, actions %d, deleted usage %d, keys %d, evaluations %d",
		mib(b.Total), b.Records[structs.InstanceSnapshot], b.Records[structs.InstanceActionSnapshot],
		b.Records[structs.InstanceUsageSnapshot], b.Records[structs.CreateRequestSnapshot], b.Records[structs.EvalSnapshot])
}

func kib(n int64) string { return fmt.Sprintf("%.1f KiB", float64(n)/1024) }
