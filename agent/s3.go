package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	s3api "github.com/stratus-cloud/stratus/agent/s3"
	"github.com/stratus-cloud/stratus/rpc"
	"github.com/stratus-cloud/stratus/structs"
)

// S3Config configures the S3 API's dedicated listener. The API is always
// served at /s3 of the HTTP listener; Listen ("127.0.0.1:9000") also
// serves it path-style at /, where S3 clients that take only a host as
// their endpoint can reach it.
type S3Config struct {
	Listen string `hcl:"listen,optional"`
}

// startS3 builds the S3 API and starts its dedicated listener, if any.
func (a *Agent) startS3() error {
	// The S3 API calls with the token the servers issue per verified
	// request (S3.Verify), never with the agent's own credential.
	a.s3 = s3api.New(s3api.Config{RPC: a.rpc, Data: &s3Data{a: a}, Logger: a.logger.Named("s3")})
	if a.config.S3 == nil || a.config.S3.Listen == "" {
		return nil
	}
	ln, err := net.Listen("tcp", a.config.S3.Listen)
	if err != nil {
		return fmt.Errorf("listen for s3: %w", err)
	}
	a.s3Addr = ln.Addr().String()
	ln = a.secureListener(ln)
	a.s3Server = a.httpLimits().newHTTPServer(a.observed("s3", a.s3.Handler("")), ifaceS3, a.logger)
	a.s3Server.Handler = a.forwarded(a.s3Server.Handler)
	a.bgWG.Add(1)
	go func() {
		defer a.bgWG.Done()
		if err := a.s3Server.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.logger.Error("s3 server stopped", "error", err)
		}
	}()
	a.logger.Info("s3 api listening", "addr", a.s3Addr)
	return nil
}

// stopS3 stops the dedicated listener.
func (a *Agent) stopS3() {
	if a.s3Server != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = a.s3Server.Shutdown(ctx)
		cancel()
	}
}

// S3Addr is the dedicated S3 listener's address, "" without one.
func (a *Agent) S3Addr() string { return a.s3Addr }

// s3Data moves object data between the S3 API and the servers' blob
// stores over the RPC listener's streams, like imageData.
type s3Data struct {
	a *Agent
}

// dialAny opens a stream to this agent's own server, else to the first
// server that answers.
func (d *s3Data) dialAny(method string) (net.Conn, error) {
	order, _ := d.a.imageData.servers()
	if len(order) == 0 {
		return nil, structs.Errorf(structs.KindUnavailable, "no servers known in region %q", d.a.config.Region)
	}
	var err error
	for _, addr := range order {
		var conn net.Conn
		if conn, err = d.a.imageData.dial(addr, method); err == nil {
			return conn, nil
		}
		if !rpc.IsConnError(err) {
			break
		}
	}
	return nil, structs.Errorf(structs.KindUnavailable, "no server reachable for the object: %v", err)
}

// Put streams an object or a part to a server.
func (d *s3Data) Put(req *structs.S3PutRequest, body io.Reader) (*structs.S3PutResult, error) {
	conn, err := d.dialAny(structs.S3PutStream)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if err := rpc.WriteFrame(conn, req); err != nil {
		return nil, err
	}
	var ready structs.S3PutReady
	if err := rpc.ReadFrame(conn, &ready); err != nil {
		return nil, err
	}
	if ready.Error != "" {
		return nil, errors.New(ready.Error)
	}
	result := make(chan structs.S3PutResult, 1)
	answered := make(chan struct{})
	go func() {
		var res structs.S3PutResult
		if err := rpc.ReadFrame(conn, &res); err != nil {
			res.Error = structs.Errorf(structs.KindUnavailable, "object upload interrupted: %v", err).Error()
		}
		close(answered)
		result <- res
	}()
	w := rpc.NewChunkWriter(conn)
	copyErr := copyUntil(w, body, answered)
	if copyErr == nil {
		copyErr = w.Close()
	} else if !errors.Is(copyErr, errAnswered) {
		// A body that failed its checks (a chunk signature, a digest):
		// cut the stream without its end marker, so the server stores
		// nothing, and answer the body's error.
		conn.Close()
		<-result
		return nil, copyErr
	}
	res := <-result
	if res.Error != "" {
		return nil, errors.New(res.Error)
	}
	if copyErr != nil {
		return nil, copyErr
	}
	return &res, nil
}

// Complete has a server assemble a multipart upload.
func (d *s3Data) Complete(req *structs.S3CompleteRequest) (*structs.S3Object, error) {
	conn, err := d.dialAny(structs.S3CompleteStream)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if err := rpc.WriteFrame(conn, req); err != nil {
		return nil, err
	}
	var res structs.S3PutResult
	if err := rpc.ReadFrame(conn, &res); err != nil {
		return nil, structs.Errorf(structs.KindUnavailable, "multipart completion interrupted: %v", err)
	}
	if res.Error != "" {
		return nil, errors.New(res.Error)
	}
	return res.Object, nil
}

// Open reads a range of an object's blob, as image downloads do.
func (d *s3Data) Open(token, hash string, locs []*structs.ImageLocation, offset, length int64) (io.ReadCloser, error) {
	return d.a.imageData.Download(token, &structs.Image{HashValue: hash, Locations: locs}, offset, length)
}
