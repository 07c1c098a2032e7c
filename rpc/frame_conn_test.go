package rpc

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/yamux"
)

// countingConn counts the writes that reach the connection.
type countingConn struct {
	net.Conn
	mu     sync.Mutex
	writes [][]byte
}

func (c *countingConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	c.writes = append(c.writes, append([]byte(nil), p...))
	c.mu.Unlock()
	return c.Conn.Write(p)
}

func yamuxHeader(typ uint8, length uint32) []byte {
	h := make([]byte, yamuxHeaderSize)
	h[0], h[1] = yamuxVersion, typ
	binary.BigEndian.PutUint32(h[4:8], 1)
	binary.BigEndian.PutUint32(h[8:12], length)
	return h
}

// tcpPair is a connected pair of real loopback TCP connections.
func tcpPair(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	a, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b := <-accepted
	if b == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

func TestFrameConnJoinsADataHeaderWithItsBody(t *testing.T) {
	t.Parallel()
	a, b := tcpPair(t)
	cc := &countingConn{Conn: a}
	fc := newFrameConn(cc)

	big := bytes.Repeat([]byte("x"), maxJoinedBody+1)
	var want bytes.Buffer
	write := func(p []byte) {
		t.Helper()
		n, err := fc.Write(p)
		if err != nil || n != len(p) {
			t.Fatalf("write %d bytes: %d, %v", len(p), n, err)
		}
		want.Write(p)
	}
	write(yamuxHeader(yamuxTypeData, 5)) // held back
	write([]byte("hello"))               // joined: one write
	write(yamuxHeader(1, 1000))          // a window update: at once
	write(yamuxHeader(yamuxTypeData, 0)) // a data frame without body: at once
	write(yamuxHeader(yamuxTypeData, uint32(len(big))))
	write(big) // too long to copy: two writes
	if got := len(cc.writes); got != 5 {
		t.Fatalf("%d writes reached the connection, want 5", got)
	}
	if len(cc.writes[0]) != yamuxHeaderSize+5 {
		t.Fatalf("first write %d bytes", len(cc.writes[0]))
	}
	got := make([]byte, want.Len())
	if err := b.SetReadDeadline(time.Now().Add(60 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(b, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatal("the bytes on the wire differ from the bytes written")
	}
}

// TestFrameConnCarriesYamux runs real yamux sessions over frameConns
// with many streams in both directions, small and large messages.
func TestFrameConnCarriesYamux(t *testing.T) {
	t.Parallel()
	a, b := tcpPair(t)
	cfg := yamux.DefaultConfig()
	cfg.LogOutput = io.Discard
	client, err := yamux.Client(newFrameConn(a), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server, err := yamux.Server(newFrameConn(b), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	go func() {
		for {
			s, err := server.AcceptStream()
			if err != nil {
				return
			}
			go func() {
				defer s.Close()
				_, _ = io.Copy(s, s) // echo until the client closes
			}()
		}
	}()
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := client.OpenStream()
			if err != nil {
				t.Error(err)
				return
			}
			defer s.Close()
			_ = s.SetDeadline(time.Now().Add(60 * time.Second))
			for i, size := range []int{1, 100, 4000, maxJoinedBody, 300000} {
				msg := bytes.Repeat([]byte{byte(w*16 + i)}, size)
				errc := make(chan error, 1)
				go func() { _, err := s.Write(msg); errc <- err }()
				got := make([]byte, size)
				if _, err := io.ReadFull(s, got); err != nil {
					t.Errorf("stream %d, %d bytes: %v", w, size, err)
					return
				}
				if err := <-errc; err != nil {
					t.Error(err)
					return
				}
				if !bytes.Equal(got, msg) {
					t.Errorf("stream %d, %d bytes: echo differs", w, size)
					return
				}
			}
		}()
	}
	wg.Wait()
}
