package s3

import (
	"bufio"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"strconv"
	"strings"
)

// maxChunkLine bounds a chunk header or trailer line.
const maxChunkLine = 4096

// maxChunkSize bounds one aws-chunked chunk (clients send 64 KiB to
// 16 MiB).
const maxChunkSize = 64 << 20

// chunkedReader decodes an aws-chunked body, as the streaming payload
// modes send it:
//
//	<hex size>;chunk-signature=<sig>\r\n<data>\r\n ... 0;chunk-signature=<sig>\r\n
//
// then \r\n, or (trailer modes) trailer lines, an optional
// x-amz-trailer-signature line and \r\n. With a signing key it checks
// every chunk's signature, each chaining the previous one from the
// request's seed signature, and the trailer's; a bad one fails the read
// with SignatureDoesNotMatch before the chunk's bytes are passed on.
type chunkedReader struct {
	br *bufio.Reader
	// signed chunks: key, scope and the previous signature.
	signed  bool
	key     []byte
	sig     *sigRequest
	prevSig string
	trailer bool
	// buf holds the verified chunk being read out.
	buf  []byte
	pos  int
	done bool
	err  error
	// Trailers are the trailer headers, lowercased names, once read.
	Trailers map[string]string
}

func newChunkedReader(body io.Reader, sig *sigRequest, key []byte, signed, trailer bool) *chunkedReader {
	return &chunkedReader{br: bufio.NewReaderSize(body, 64<<10), signed: signed, key: key, sig: sig,
		prevSig: sig.Signature, trailer: trailer}
}

func (c *chunkedReader) Read(p []byte) (int, error) {
	for c.pos == len(c.buf) {
		if c.err != nil {
			return 0, c.err
		}
		if c.done {
			return 0, io.EOF
		}
		c.err = c.nextChunk()
	}
	n := copy(p, c.buf[c.pos:])
	c.pos += n
	return n, nil
}

func malformed(format string, args ...any) error {
	return s3Error(codeIncompleteBody, "The aws-chunked body is malformed: "+format, args...)
}

// readLine reads one CRLF-terminated line without its CRLF.
func (c *chunkedReader) readLine() (string, error) {
	var line []byte
	for {
		part, isPrefix, err := c.br.ReadLine()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return "", malformed("the body ended early")
			}
			return "", err
		}
		line = append(line, part...)
		if len(line) > maxChunkLine {
			return "", malformed("a line is longer than %d bytes", maxChunkLine)
		}
		if !isPrefix {
			return string(line), nil
		}
	}
}

// nextChunk reads, and checks, the next chunk into buf.
func (c *chunkedReader) nextChunk() error {
	line, err := c.readLine()
	if err != nil {
		return err
	}
	sizeHex, ext, _ := strings.Cut(line, ";")
	size, err := strconv.ParseInt(strings.TrimSpace(sizeHex), 16, 64)
	if err != nil || size < 0 || size > maxChunkSize {
		return malformed("chunk size %q", sizeHex)
	}
	chunkSig := ""
	if c.signed {
		name, value, _ := strings.Cut(ext, "=")
		if name != "chunk-signature" || !isHexSig(value) {
			return malformed("chunk without a chunk-signature")
		}
		chunkSig = value
	}
	if cap(c.buf) < int(size) {
		c.buf = make([]byte, size)
	}
	c.buf, c.pos = c.buf[:size], 0
	if _, err := io.ReadFull(c.br, c.buf); err != nil {
		return malformed("a chunk ended early")
	}
	if c.signed {
		if err := c.checkChunk(chunkSig); err != nil {
			return err
		}
	}
	if size > 0 {
		return c.crlf()
	}
	c.done = true
	if c.trailer {
		return c.readTrailer()
	}
	return c.crlf()
}

// crlf consumes the CRLF after a chunk's data.
func (c *chunkedReader) crlf() error {
	var end [2]byte
	if _, err := io.ReadFull(c.br, end[:]); err != nil || end != [2]byte{'\r', '\n'} {
		return malformed("a chunk is not followed by CRLF")
	}
	return nil
}

// checkChunk verifies a chunk signature in constant time.
func (c *chunkedReader) checkChunk(got string) error {
	sum := sha256.Sum256(c.buf)
	sts := "AWS4-HMAC-SHA256-PAYLOAD\n" + c.sig.AmzDate.Format(amzDateFmt) + "\n" + c.sig.Scope() + "\n" +
		c.prevSig + "\n" + emptySHA256 + "\n" + hex.EncodeToString(sum[:])
	if !equalHexMAC(hmacSHA256(c.key, sts), got) {
		return s3Error(codeSignatureDoesNotMatch, "The chunk signature we calculated does not match the signature you provided.")
	}
	c.prevSig = got
	return nil
}

func equalHexMAC(want []byte, got string) bool {
	raw, err := hex.DecodeString(got)
	return err == nil && hmac.Equal(want, raw)
}

// readTrailer reads the trailer lines up to the empty line and checks
// the trailer signature of a signed stream.
func (c *chunkedReader) readTrailer() error {
	c.Trailers = map[string]string{}
	var signedText strings.Builder
	trailerSig := ""
	for {
		line, err := c.readLine()
		if err != nil {
			return err
		}
		if line == "" {
			// Some clients (minio-go) end the trailer lines with a
			// blank line before the signature line.
			if c.signed && trailerSig == "" && len(c.Trailers) > 0 {
				continue
			}
			break
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			return malformed("trailer line %q", line)
		}
		name, value = strings.ToLower(strings.TrimSpace(name)), strings.TrimSpace(value)
		if name == "x-amz-trailer-signature" {
			trailerSig = value
			continue
		}
		c.Trailers[name] = value
		fmt.Fprintf(&signedText, "%s:%s\n", name, value)
	}
	if !c.signed {
		return nil
	}
	sum := sha256.Sum256([]byte(signedText.String()))
	sts := "AWS4-HMAC-SHA256-TRAILER\n" + c.sig.AmzDate.Format(amzDateFmt) + "\n" + c.sig.Scope() + "\n" +
		c.prevSig + "\n" + hex.EncodeToString(sum[:])
	if !equalHexMAC(hmacSHA256(c.key, sts), trailerSig) {
		return s3Error(codeSignatureDoesNotMatch, "The trailer signature we calculated does not match the signature you provided.")
	}
	return nil
}

// checksumReader computes an x-amz-checksum-* while the body passes and,
// at its end, compares it with the header's value or the trailer's: a
// mismatch fails the last read with BadDigest, so the object is not
// stored.
type checksumReader struct {
	r    io.Reader
	name string // the algorithm, "crc32", "crc32c", "sha1", "sha256", "crc64nvme"
	h    hash.Hash
	// want is the header's value, or wantFn reads the trailer's.
	want   string
	wantFn func() string
}

func (c *checksumReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.h.Write(p[:n])
	if errors.Is(err, io.EOF) {
		want := c.want
		if c.wantFn != nil {
			want = c.wantFn()
		}
		if want == "" {
			return n, s3Error(codeInvalidRequest, "The x-amz-checksum-%s trailer was announced but not sent.", c.name)
		}
		if got := encodeChecksum(c.h.Sum(nil)); got != want {
			return n, s3Error(codeBadDigest, "The %s you specified did not match the calculated checksum.", strings.ToUpper(c.name))
		}
	}
	return n, err
}
