package rpc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sort"
	"time"

	"github.com/stratus-cloud/stratus/structs"
)

// A stream (TypeStream) has a TCP connection of its own, so a
// multi-gigabyte transfer neither shares a yamux window with the RPCs nor
// holds them up. Its handler speaks its own protocol, usually a request
// frame, an answer frame, then raw or chunked bytes.

// MaxFrameSize bounds a frame's msgpack body.
const MaxFrameSize = 1 << 20

// MaxChunkSize bounds one chunk of a ChunkWriter.
const MaxChunkSize = 4 << 20

// StreamHandler serves one stream connection. args is the stream's
// request, decoded from the first frame the client sends and passed by
// the server's Authorizer (SetAuthorizer) as an RPC's arguments are;
// nil for a stream registered without a request. The connection is
// closed when the handler returns (and by Server.Shutdown).
type StreamHandler func(conn net.Conn, args any)

// stream is a registered stream handler and its request's type.
type stream struct {
	newArgs func() any
	handler StreamHandler
}

type streamHeader struct {
	Method string
}

type streamAck struct {
	Error string
}

// RegisterStream publishes a stream handler under name. newArgs returns
// a new request value (a pointer to a struct): the server decodes the
// first frame the client sends after the header into it and runs the
// Authorizer on it, as on an RPC's arguments, before the handler runs;
// a refusal is answered as a frame {Error: text}, which every stream's
// first answer frame can decode. newArgs nil leaves the connection to
// the handler at once (and outside any Authorizer). Register every
// handler before Serve.
func (s *Server) RegisterStream(name string, newArgs func() any, h StreamHandler) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.streams == nil {
		s.streams = map[string]stream{}
	}
	if _, dup := s.streams[name]; dup || name == "" || h == nil {
		return fmt.Errorf("rpc: stream handler %q registered twice or empty", name)
	}
	s.streams[name] = stream{newArgs: newArgs, handler: h}
	s.methodsMu.Lock()
	s.streamNames = append(s.streamNames, name)
	sort.Strings(s.streamNames)
	s.methodsMu.Unlock()
	return nil
}

// StreamMethods lists the registered stream handlers' names, sorted:
// like Methods, what a caller can reach, for checks that each has a
// rule.
func (s *Server) StreamMethods() []string {
	s.methodsMu.Lock()
	defer s.methodsMu.Unlock()
	return append([]string(nil), s.streamNames...)
}

// serveStream reads a stream's header and hands the connection to its
// handler.
func (s *Server) serveStream(conn net.Conn) {
	remote := conn.RemoteAddr()
	if err := conn.SetReadDeadline(time.Now().Add(s.handshakeTimeout)); err != nil {
		return
	}
	var hdr streamHeader
	if err := ReadFrame(conn, &hdr); err != nil {
		s.logger.Debug("failed to read stream header", "remote", remote, "error", err)
		return
	}
	if err := conn.SetReadDeadline(time.Time{}); err != nil {
		return
	}
	s.mu.Lock()
	st, ok := s.streams[hdr.Method]
	s.mu.Unlock()
	if !ok {
		_ = WriteFrame(conn, &streamAck{Error: fmt.Sprintf("rpc: unknown stream %q", hdr.Method)})
		return
	}
	if err := WriteFrame(conn, &streamAck{}); err != nil {
		return
	}
	if st.newArgs == nil {
		st.handler(conn, nil)
		return
	}
	args, err := s.streamArgs(conn, hdr.Method, st.newArgs)
	if err != nil {
		s.logger.Debug("stream refused", "remote", remote, "stream", hdr.Method, "error", err)
		_ = WriteFrame(conn, &streamAck{Error: err.Error()})
		return
	}
	st.handler(conn, args)
}

// streamArgs reads a stream's request frame, within the handshake
// timeout, and authorizes it: the stream hook, the same rule table as
// the RPCs'. Reply filters do not apply to streams.
func (s *Server) streamArgs(conn net.Conn, method string, newArgs func() any) (any, error) {
	if err := conn.SetReadDeadline(time.Now().Add(s.handshakeTimeout)); err != nil {
		return nil, err
	}
	args := newArgs()
	if err := ReadFrame(conn, args); err != nil {
		return nil, fmt.Errorf("rpc: read the request of stream %s: %w", method, err)
	}
	if err := conn.SetReadDeadline(time.Time{}); err != nil {
		return nil, err
	}
	if fn := s.authorize.Load(); fn != nil {
		if _, err := (*fn)(method, args); err != nil {
			return nil, err
		}
	}
	return args, nil
}

// Stream opens a stream to the handler method of the server at addr.
// The caller owns the connection and closes it. Transport failures are
// *ConnError values; an unknown handler is an ordinary error.
func (p *ConnPool) Stream(addr, method string) (net.Conn, error) {
	p.mu.Lock()
	shutdown := p.shutdown
	p.mu.Unlock()
	if shutdown {
		return nil, ErrPoolShutdown
	}
	conn, err := dialConn(addr, TypeStream, p.tlsConfig, p.dialTimeout)
	if err != nil {
		return nil, &ConnError{Addr: addr, Op: "dial stream", Err: err}
	}
	if err := conn.SetDeadline(time.Now().Add(p.dialTimeout)); err != nil {
		conn.Close()
		return nil, &ConnError{Addr: addr, Op: "open stream", Err: err}
	}
	if err := WriteFrame(conn, &streamHeader{Method: method}); err != nil {
		conn.Close()
		return nil, &ConnError{Addr: addr, Op: "open stream", Err: err}
	}
	var ack streamAck
	if err := ReadFrame(conn, &ack); err != nil {
		conn.Close()
		return nil, &ConnError{Addr: addr, Op: "open stream", Err: err}
	}
	if ack.Error != "" {
		conn.Close()
		return nil, errors.New(ack.Error)
	}
	if err := conn.SetDeadline(time.Time{}); err != nil {
		conn.Close()
		return nil, &ConnError{Addr: addr, Op: "open stream", Err: err}
	}
	return conn, nil
}

// WriteFrame writes v as one frame: a 4-byte big-endian length, then v
// in msgpack.
func WriteFrame(w io.Writer, v any) error {
	body, err := structs.Encode(v)
	if err != nil {
		return err
	}
	if len(body) > MaxFrameSize {
		return fmt.Errorf("rpc: frame of %d bytes exceeds %d", len(body), MaxFrameSize)
	}
	buf := make([]byte, 4, 4+len(body))
	binary.BigEndian.PutUint32(buf, uint32(len(body)))
	_, err = w.Write(append(buf, body...))
	return err
}

// ReadFrame reads one frame written by WriteFrame into v. It reads
// nothing past the frame.
func ReadFrame(r io.Reader, v any) error {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n > MaxFrameSize {
		return fmt.Errorf("rpc: frame of %d bytes exceeds %d", n, MaxFrameSize)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return unexpected(err)
	}
	return structs.Decode(body, v)
}

// ChunkWriter frames a byte stream of unknown length: every Write is
// sent as chunks of [4-byte length][bytes], and Close sends the
// zero-length end marker (it does not close the underlying writer). A
// ChunkReader on the other side reports io.ErrUnexpectedEOF when the
// connection ends before the marker, so a cut-off transfer is never
// taken for a complete one.
type ChunkWriter struct {
	w      io.Writer
	closed bool
}

// NewChunkWriter returns a ChunkWriter over w.
func NewChunkWriter(w io.Writer) *ChunkWriter { return &ChunkWriter{w: w} }

// Write sends p as one or more chunks.
func (c *ChunkWriter) Write(p []byte) (int, error) {
	if c.closed {
		return 0, errors.New("rpc: write to a closed chunk writer")
	}
	written := 0
	for len(p) > 0 {
		n := min(len(p), MaxChunkSize)
		var hdr [4]byte
		binary.BigEndian.PutUint32(hdr[:], uint32(n))
		bufs := net.Buffers{hdr[:], p[:n]}
		if _, err := bufs.WriteTo(c.w); err != nil {
			return written, err
		}
		written += n
		p = p[n:]
	}
	return written, nil
}

// Close sends the end marker.
func (c *ChunkWriter) Close() error {
	if c.closed {
		return nil
	}
	c.closed = true
	_, err := c.w.Write([]byte{0, 0, 0, 0})
	return err
}

// ChunkReader reads what a ChunkWriter sent: io.EOF at the end marker,
// io.ErrUnexpectedEOF if the stream ends before it.
type ChunkReader struct {
	r    io.Reader
	left uint32
	done bool
}

// NewChunkReader returns a ChunkReader over r.
func NewChunkReader(r io.Reader) *ChunkReader { return &ChunkReader{r: r} }

// Read reads the next bytes of the chunked stream.
func (c *ChunkReader) Read(p []byte) (int, error) {
	if c.done {
		return 0, io.EOF
	}
	if c.left == 0 {
		var hdr [4]byte
		if _, err := io.ReadFull(c.r, hdr[:]); err != nil {
			return 0, unexpected(err)
		}
		n := binary.BigEndian.Uint32(hdr[:])
		if n == 0 {
			c.done = true
			return 0, io.EOF
		}
		if n > MaxChunkSize {
			return 0, fmt.Errorf("rpc: chunk of %d bytes exceeds %d", n, MaxChunkSize)
		}
		c.left = n
	}
	if uint32(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= uint32(n)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

// unexpected turns a clean EOF in the middle of a frame into
// io.ErrUnexpectedEOF.
func unexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
