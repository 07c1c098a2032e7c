package server

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
)

// The checksummed log format: every entry's Data is stored followed by a
// trailer of a CRC-32C (Castagnoli) over the entry's index, term, type
// and data, then a 4-byte magic. bbolt checks its own pages but not the
// bytes inside a value, and msgpack decodes a flipped byte in a command
// without complaint, so without the trailer such damage would be applied
// to the FSM silently.
//
// Compatibility: the stable-store key logChecksumFromKey records the first
// index written in this format. A store written before the format
// existed gets it set to its last index + 1 when first opened, so older
// entries are read as they are; a fresh store checksums from index 1.
// When Raft overwrites entries below that index (a follower truncating a
// conflicting suffix), the key moves down first, so every entry at or
// above it carries a trailer. A server that has written checksummed
// entries cannot be downgraded to a release without this format.
var (
	logChecksumFromKey = []byte("stratus_log_checksum_from")
	logChecksumMagic   = []byte("SCK1")
	castagnoli         = crc32.MakeTable(crc32.Castagnoli)
)

const logTrailerLen = 4 + 4

// ErrLogCorrupt is wrapped by every error reporting a damaged Raft log
// entry.
var ErrLogCorrupt = errors.New("raft log entry is corrupt")

// checksumStore wraps the bbolt log and stable store and adds a checksum
// to each log entry, verified on every read.
type checksumStore struct {
	raftStore
	path string
	// from is the first index stored with a trailer; written only by
	// StoreLogs, which Raft calls from one goroutine.
	from uint64
}

// newChecksumStore wraps inner, recording the format's start index on
// first use. path names the store in errors.
func newChecksumStore(inner raftStore, path string) (*checksumStore, error) {
	s := &checksumStore{raftStore: inner, path: path}
	raw, err := inner.Get(logChecksumFromKey)
	switch {
	case err == nil && len(raw) == 8:
		s.from = binary.BigEndian.Uint64(raw)
		return s, nil
	case err == nil:
		return nil, fmt.Errorf("raft store %s: %w: the log format flag %q holds %d bytes, want 8",
			path, ErrLogCorrupt, logChecksumFromKey, len(raw))
	case !errors.Is(err, raftboltdb.ErrKeyNotFound):
		return nil, fmt.Errorf("raft store %s: read log format flag: %w", path, err)
	}
	last, err := inner.LastIndex()
	if err != nil {
		return nil, fmt.Errorf("raft store %s: read last index: %w", path, err)
	}
	if err := s.setFrom(last + 1); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *checksumStore) setFrom(idx uint64) error {
	var buf [8]byte
	binary.BigEndian.PutUint64(buf[:], idx)
	if err := s.raftStore.Set(logChecksumFromKey, buf[:]); err != nil {
		return fmt.Errorf("raft store %s: record log format flag: %w", s.path, err)
	}
	s.from = idx
	return nil
}

// entryChecksum covers the fields the FSM and Raft act on.
func entryChecksum(l *raft.Log, data []byte) uint32 {
	var hdr [17]byte
	binary.BigEndian.PutUint64(hdr[0:8], l.Index)
	binary.BigEndian.PutUint64(hdr[8:16], l.Term)
	hdr[16] = byte(l.Type)
	sum := crc32.Update(0, castagnoli, hdr[:])
	return crc32.Update(sum, castagnoli, data)
}

// StoreLog stores one entry with its checksum.
func (s *checksumStore) StoreLog(l *raft.Log) error {
	return s.StoreLogs([]*raft.Log{l})
}

// StoreLogs stores entries with their checksums, leaving the callers'
// entries untouched (Raft keeps using them).
func (s *checksumStore) StoreLogs(logs []*raft.Log) error {
	if len(logs) == 0 {
		return nil
	}
	if min := logs[0].Index; min < s.from {
		if err := s.setFrom(min); err != nil {
			return err
		}
	}
	out := make([]*raft.Log, len(logs))
	for i, l := range logs {
		c := *l
		data := make([]byte, len(l.Data), len(l.Data)+logTrailerLen)
		copy(data, l.Data)
		data = binary.BigEndian.AppendUint32(data, entryChecksum(l, l.Data))
		c.Data = append(data, logChecksumMagic...)
		out[i] = &c
	}
	return s.raftStore.StoreLogs(out)
}

// GetLog reads an entry and verifies its checksum, returning an error
// wrapping ErrLogCorrupt when it does not match.
func (s *checksumStore) GetLog(idx uint64, l *raft.Log) error {
	if err := s.raftStore.GetLog(idx, l); err != nil {
		if errors.Is(err, raft.ErrLogNotFound) {
			return err
		}
		return fmt.Errorf("raft store %s: entry %d: %w: %v", s.path, idx, ErrLogCorrupt, err)
	}
	if l.Index != idx {
		return fmt.Errorf("raft store %s: entry %d: %w: it records index %d", s.path, idx, ErrLogCorrupt, l.Index)
	}
	if idx < s.from {
		return nil
	}
	n := len(l.Data)
	if n < logTrailerLen || !bytes.Equal(l.Data[n-4:], logChecksumMagic) {
		return fmt.Errorf("raft store %s: entry %d: %w: its checksum trailer is missing", s.path, idx, ErrLogCorrupt)
	}
	data := l.Data[:n-logTrailerLen]
	stored := binary.BigEndian.Uint32(l.Data[n-logTrailerLen : n-4])
	if got := entryChecksum(l, data); got != stored {
		return fmt.Errorf("raft store %s: entry %d: %w: checksum %08x, stored %08x",
			s.path, idx, ErrLogCorrupt, got, stored)
	}
	l.Data = data
	return nil
}
