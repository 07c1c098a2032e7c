package rpc

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

type echoRequest struct {
	Prefix string
}

// newEchoRequest is Test.Echo's request.
func newEchoRequest() any { return &echoRequest{} }

// echoStream answers a request frame, then echoes the chunked body back
// prefixed, chunked too.
func echoStream(conn net.Conn, args any) {
	req := args.(*echoRequest)
	out := NewChunkWriter(conn)
	if _, err := out.Write([]byte(req.Prefix)); err != nil {
		return
	}
	if _, err := io.Copy(out, NewChunkReader(conn)); err != nil {
		_ = WriteFrame(conn, &streamAck{Error: err.Error()})
		return
	}
	_ = out.Close()
}

func withEcho(s *Server) {
	if err := s.RegisterStream("Test.Echo", newEchoRequest, echoStream); err != nil {
		panic(err)
	}
}

func TestStreamRoundTripLargeBody(t *testing.T) {
	srv := startServer(t, "", ServerConfig{}, withEcho)
	pool := newPool(t, PoolConfig{})
	conn, err := pool.Stream(srv.Addr().String(), "Test.Echo")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := WriteFrame(conn, &echoRequest{Prefix: "> "}); err != nil {
		t.Fatal(err)
	}
	body := bytes.Repeat([]byte("0123456789abcdef"), 1<<20) // 16 MiB, several chunks
	go func() {
		w := NewChunkWriter(conn)
		_, _ = io.CopyBuffer(w, bytes.NewReader(body), make([]byte, 5<<20))
		_ = w.Close()
	}()
	h := sha256.New()
	n, err := io.Copy(h, NewChunkReader(conn))
	if err != nil {
		t.Fatal(err)
	}
	want := sha256.New()
	want.Write([]byte("> "))
	want.Write(body)
	if n != int64(len(body)+2) || !bytes.Equal(h.Sum(nil), want.Sum(nil)) {
		t.Fatalf("echoed %d bytes, other data", n)
	}
	// RPCs keep working on the same listener.
	var reply EchoReply
	if err := pool.RPC(srv.Addr().String(), "Test.Echo", &EchoArgs{Msg: "hi", N: 2}, &reply); err != nil || reply.N != 4 {
		t.Fatalf("rpc beside a stream: %+v %v", reply, err)
	}
}

func TestStreamUnknownHandlerAndRegistration(t *testing.T) {
	srv := startServer(t, "", ServerConfig{}, withEcho)
	if err := srv.RegisterStream("Test.Echo", newEchoRequest, echoStream); err == nil {
		t.Fatal("duplicate registration accepted")
	}
	pool := newPool(t, PoolConfig{})
	_, err := pool.Stream(srv.Addr().String(), "Nope.Get")
	if err == nil || IsConnError(err) || !strings.Contains(err.Error(), `unknown stream "Nope.Get"`) {
		t.Fatalf("unknown handler: %v", err)
	}
	_, err = pool.Stream("127.0.0.1:1", "Test.Echo")
	if !IsConnError(err) {
		t.Fatalf("refused dial: %v", err)
	}
	pool.Shutdown()
	if _, err := pool.Stream(srv.Addr().String(), "Test.Echo"); !errors.Is(err, ErrPoolShutdown) {
		t.Fatalf("after shutdown: %v", err)
	}
}

func TestStreamOverTLS(t *testing.T) {
	f := newTLSFixture(t, withEcho)
	pool := newPool(t, PoolConfig{TLS: mustClientTLS(t, f.client)})
	conn, err := pool.Stream(f.srv.Addr().String(), "Test.Echo")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = WriteFrame(conn, &echoRequest{Prefix: "tls:"})
	w := NewChunkWriter(conn)
	_, _ = w.Write([]byte("secret"))
	_ = w.Close()
	got, err := io.ReadAll(NewChunkReader(conn))
	if err != nil || string(got) != "tls:secret" {
		t.Fatalf("%q %v", got, err)
	}
	// A plaintext stream is refused by a TLS-only server.
	plain := newPool(t, PoolConfig{})
	if _, err := plain.Stream(f.srv.Addr().String(), "Test.Echo"); err == nil {
		t.Fatal("plaintext stream accepted")
	}
}

func TestChunkReaderSeesTruncation(t *testing.T) {
	var buf bytes.Buffer
	w := NewChunkWriter(&buf)
	_, _ = w.Write([]byte("hello"))
	// No end marker: the stream was cut.
	if _, err := io.ReadAll(NewChunkReader(bytes.NewReader(buf.Bytes()))); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("missing end marker: %v", err)
	}
	// Cut inside a chunk.
	if _, err := io.ReadAll(NewChunkReader(bytes.NewReader(buf.Bytes()[:6]))); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("cut chunk: %v", err)
	}
	_ = w.Close()
	if _, err := w.Write([]byte("x")); err == nil {
		t.Fatal("write after close")
	}
	got, err := io.ReadAll(NewChunkReader(&buf))
	if err != nil || string(got) != "hello" {
		t.Fatalf("%q %v", got, err)
	}
	// An oversized frame is refused rather than allocated.
	big := []byte{0xff, 0xff, 0xff, 0xff}
	var v echoRequest
	if err := ReadFrame(bytes.NewReader(big), &v); err == nil {
		t.Fatal("oversized frame accepted")
	}
	if _, err := NewChunkReader(bytes.NewReader(big)).Read(make([]byte, 1)); err == nil {
		t.Fatal("oversized chunk accepted")
	}
}

func TestShutdownEndsStreams(t *testing.T) {
	entered := make(chan struct{})
	srv := startServer(t, "", ServerConfig{}, func(s *Server) {
		_ = s.RegisterStream("Test.Hold", nil, func(conn net.Conn, _ any) {
			close(entered)
			_, _ = io.Copy(io.Discard, conn) // until the connection closes
		})
	})
	pool := newPool(t, PoolConfig{})
	conn, err := pool.Stream(srv.Addr().String(), "Test.Hold")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	<-entered
	done := make(chan error, 1)
	go func() { done <- srv.Shutdown() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("shutdown waited for a stream")
	}
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Read(make([]byte, 1)); err == nil {
		t.Fatal("stream still open after shutdown")
	}
}
