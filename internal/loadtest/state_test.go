package loadtest

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hashicorp/go-msgpack/v2/codec"

	"github.com/stratus-cloud/stratus/structs"
)

func TestBreakdownCountsRecordsAndBytesByType(t *testing.T) {
	var buf bytes.Buffer
	enc := codec.NewEncoder(&buf, structs.MsgpackHandle)
	write := func(rt structs.SnapshotType, v any) {
		buf.Write([]byte{byte(rt), 1})
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
	}
	write(structs.SnapshotHeader, &structs.SnapshotHeaderRecord{Magic: structs.SnapshotMagic, Version: 1, LastIndex: 9})
	write(structs.InstanceSnapshot, &structs.Instance{ID: "i1", Name: "web"})
	write(structs.EvalSnapshot, &structs.Evaluation{ID: "e1"})
	write(structs.EvalSnapshot, &structs.Evaluation{ID: "e2"})
	b, err := breakdown(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if b.Records[structs.EvalSnapshot] != 2 || b.Records[structs.InstanceSnapshot] != 1 || b.Total != int64(buf.Len()) {
		t.Fatalf("breakdown %+v", b)
	}
	var sum int64
	for _, n := range b.Bytes {
		sum += n
	}
	if sum != b.Total {
		t.Fatalf("bytes by type add up to %d of %d", sum, b.Total)
	}
	var out strings.Builder
	compareStates(&out, &StateBreakdown{Records: map[structs.SnapshotType]int{}, Bytes: map[structs.SnapshotType]int64{}}, b)
	if !strings.Contains(out.String(), "evaluations") {
		t.Fatalf("comparison:\n%s", out.String())
	}
	if _, err := breakdown([]byte{5}); err == nil {
		t.Fatal("a truncated stream was read")
	}
}
