package rpc

import (
	"bytes"
	"encoding/binary"
	"io"
	"net/rpc"
	"testing"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// fuzzEndpoint is what FuzzDecodeRequest serves: methods that answer
// at once (no Block), with a free-form and a structs-typed body.
type fuzzEndpoint struct{}

func (fuzzEndpoint) Echo(args *EchoArgs, reply *EchoReply) error {
	reply.Msg, reply.N, reply.Meta = args.Msg, args.N, args.Meta
	return nil
}

func (fuzzEndpoint) Create(args *structs.ImageCreateRequest, reply *structs.GenericResponse) error {
	if args.Image == nil {
		return structs.Errorf(structs.KindInvalid, "no image")
	}
	reply.Index = 1
	return nil
}

// fuzzConn is a ReadWriteCloser reading a fixed input and discarding
// (but counting) what is written.
type fuzzConn struct {
	r       io.Reader
	written int
}

func (c *fuzzConn) Read(p []byte) (int, error)  { return c.r.Read(p) }
func (c *fuzzConn) Write(p []byte) (int, error) { c.written += len(p); return len(p), nil }
func (c *fuzzConn) Close() error                { return nil }

// encodeCalls is a stream of msgpack-RPC requests as a client writes it.
func encodeCalls(t testing.TB, calls ...func(c rpc.ClientCodec) error) []byte {
	var buf bytes.Buffer
	cc := newCodec(bufConn{Buffer: &buf})
	for _, write := range calls {
		if err := write(cc); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// bufConn is a ReadWriteCloser over a buffer, for the client codec.
type bufConn struct{ *bytes.Buffer }

func (bufConn) Close() error { return nil }

// call is a request of method with args, for encodeCalls.
func call(seq uint64, method string, args any) func(c rpc.ClientCodec) error {
	return func(c rpc.ClientCodec) error {
		return c.WriteRequest(&rpc.Request{ServiceMethod: method, Seq: seq}, args)
	}
}

// frame is one WriteFrame frame of v.
func frame(t testing.TB, v any) []byte {
	var buf bytes.Buffer
	if err := WriteFrame(&buf, v); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// FuzzDecodeRequest feeds an arbitrary byte stream to what a server
// reads from a connection: the msgpack-RPC codec serving registered
// endpoints (as each yamux stream is served), a stream header frame and
// a chunked body. Whatever the bytes, decoding must end (the input is
// finite) without panicking; the seeds are real encoded calls. Run
// longer with go test -run '^$' -fuzz FuzzDecodeRequest -fuzztime 5m ./rpc.
func FuzzDecodeRequest(f *testing.F) {
	f.Add(encodeCalls(f, call(1, "Fuzz.Echo", &EchoArgs{Msg: "hi", N: 2, Meta: map[string]any{"k": "v", "n": 1, "l": []any{1, "x"}}})))
	f.Add(encodeCalls(f,
		call(1, "Fuzz.Create", &structs.ImageCreateRequest{Image: &structs.Image{ID: "i-1", Name: "cirros", Tags: []string{"a"},
			Properties: map[string]string{"os_distro": "cirros"}}}),
		call(2, "Fuzz.Echo", &EchoArgs{Msg: "second"}),
		call(3, "Fuzz.Missing", &EchoArgs{}),
	))
	f.Add(encodeCalls(f, call(7, "Fuzz.Create", &structs.ImageCreateRequest{})))
	f.Add(frame(f, &streamHeader{Method: "Image.Download"}))
	var chunked bytes.Buffer
	cw := NewChunkWriter(&chunked)
	_, _ = cw.Write([]byte("image data"))
	_ = cw.Close()
	f.Add(chunked.Bytes())
	f.Add([]byte{0x94, 0x00, 0x01, 0xa9, 'F', 'u', 'z', 'z', '.', 'E', 'c', 'h', 'o', 0x91, 0x80})
	f.Add(binary.BigEndian.AppendUint32(nil, MaxFrameSize+1))
	f.Add([]byte{0xdd, 0xff, 0xff, 0xff, 0xff}) // an array claiming 4G elements

	srv := rpc.NewServer()
	if err := srv.RegisterName("Fuzz", fuzzEndpoint{}); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		done := make(chan struct{})
		go func() {
			defer close(done)
			srv.ServeCodec(newCodec(&fuzzConn{r: bytes.NewReader(in)}))
		}()
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			t.Fatalf("serving %d bytes did not end", len(in))
		}

		var hdr streamHeader
		_ = ReadFrame(bytes.NewReader(in), &hdr)
		_, _ = io.Copy(io.Discard, NewChunkReader(bytes.NewReader(in)))
		var args structs.ImageCreateRequest
		_ = structs.Decode(in, &args)
	})
}
