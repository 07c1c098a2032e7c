package rpc

import (
	"fmt"
	"io"
	"net/rpc"
	"reflect"

	msgpackrpc "github.com/hashicorp/net-rpc-msgpackrpc/v2"
	"github.com/stratus-cloud/stratus/structs"
)

// newCodec wraps a stream in the msgpack-RPC codec, usable as either a
// client or a server codec. It uses structs.MsgpackHandle so RPC bodies are
// encoded exactly like Raft entries (strings as strings, map[string]any for
// free-form maps). Both directions are buffered; the codec flushes after
// every message.
func newCodec(conn io.ReadWriteCloser) *msgpackrpc.MsgpackCodec {
	return msgpackrpc.NewCodecFromHandle(true, true, conn, structs.MsgpackHandle)
}

// inmemCodec is a net/rpc ServerCodec for exactly one in-process request.
// It hands values across by copying what the pointers point to instead of
// encoding, which makes Server.Call cheap. The copy is shallow: maps, slices
// and pointers inside args and reply are shared between caller and endpoint,
// as they would never be over the wire.
type inmemCodec struct {
	method string
	args   any
	reply  any
	err    error
}

func (c *inmemCodec) ReadRequestHeader(req *rpc.Request) error {
	req.ServiceMethod = c.method
	return nil
}

func (c *inmemCodec) ReadRequestBody(body any) error {
	if body == nil {
		// net/rpc discards the body of a request it cannot serve.
		return nil
	}
	if err := copyInto(body, c.args); err != nil {
		return fmt.Errorf("rpc: %s args: %w", c.method, err)
	}
	return nil
}

func (c *inmemCodec) WriteResponse(resp *rpc.Response, body any) error {
	if resp.Error != "" {
		// Same type and text a remote caller would see, so callers need
		// not care whether the call stayed in-process.
		c.err = rpc.ServerError(resp.Error)
		return nil
	}
	if err := copyInto(c.reply, body); err != nil {
		c.err = fmt.Errorf("rpc: %s reply: %w", c.method, err)
	}
	return nil
}

func (c *inmemCodec) Close() error { return nil }

// copyInto sets *dst to the value src holds, dereferencing src as often as
// needed (callers pass *Req where net/rpc hands the codec a *Req to fill).
func copyInto(dst, src any) error {
	dv := reflect.ValueOf(dst)
	if dv.Kind() != reflect.Pointer || dv.IsNil() {
		return fmt.Errorf("destination %T is not a non-nil pointer", dst)
	}
	dv = dv.Elem()
	sv := reflect.ValueOf(src)
	for sv.IsValid() && !sv.Type().AssignableTo(dv.Type()) && sv.Kind() == reflect.Pointer && !sv.IsNil() {
		sv = sv.Elem()
	}
	if !sv.IsValid() || !sv.Type().AssignableTo(dv.Type()) {
		return fmt.Errorf("cannot use %T as %s", src, dv.Type())
	}
	dv.Set(sv)
	return nil
}
