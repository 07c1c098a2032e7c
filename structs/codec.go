package structs

import (
	"bytes"
	"fmt"
	"reflect"

	"github.com/hashicorp/go-msgpack/v2/codec"
)

// MsgpackHandle is the one msgpack configuration used for Raft entries,
// snapshots and RPC, so every layer encodes identically.
var MsgpackHandle = func() *codec.MsgpackHandle {
	h := &codec.MsgpackHandle{}
	h.RawToString = true
	h.WriteExt = true
	// Decoding into a map[string]any must yield map[string]any, not
	// map[any]any, so free-form metadata round-trips cleanly.
	h.MapType = reflect.TypeOf(map[string]any(nil))
	return h
}()

// Encode serialises v with MsgpackHandle.
func Encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := codec.NewEncoder(&buf, MsgpackHandle).Encode(v); err != nil {
		return nil, fmt.Errorf("msgpack encode %T: %w", v, err)
	}
	return buf.Bytes(), nil
}

// Decode deserialises msgpack bytes into out.
func Decode(buf []byte, out any) error {
	if err := codec.NewDecoderBytes(buf, MsgpackHandle).Decode(out); err != nil {
		return fmt.Errorf("msgpack decode %T: %w", out, err)
	}
	return nil
}
