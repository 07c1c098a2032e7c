package server

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"io"
	"math/rand/v2"
	"sort"
	"sync"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/stratus-cloud/stratus/structs"
)

// The image sync runs on every server. On each change of the images
// table, and every ImageSyncInterval for membership changes, it makes
// its own store agree with the state:
//
//   - replication: every blob should be held by min(ImageReplicas, alive
//     servers) alive servers, so losing one server loses no image. When
//     it is held by fewer, the alive servers that do not hold it rank
//     themselves by rendezvous hashing of (blob, node id), and those
//     ranked first pull it from a holder over a Blob.Get stream, then
//     record themselves as a location. Every server computes the same
//     ranking from the same state and membership, so no leader has to
//     assign copies, and a copy lost with its server is made again.
//   - bookkeeping: a blob this server holds but is not recorded for is
//     recorded; one it is recorded for but lost is forgotten.
//   - sweeping: a blob no image names any more is removed once it is
//     older than ImageGCGrace (which covers a write whose image the
//     local state does not show yet).
//   - stale uploads: an image left saving by this server (it restarted
//     mid-upload) goes back to queued; the leader does the same for an
//     uploader gossip has not seen alive for ImageUploaderTimeout.
type imageSync struct {
	mu sync.Mutex
	// pins are blobs being written or recorded: never swept.
	pins map[string]int
	// uploads count the streams receiving data for each image (a failed
	// one may still be closing while the next begins).
	uploads map[string]int
	// pulling are the blobs being copied here.
	pulling map[string]bool
	// missingSince is when the leader first saw an uploader gone.
	missingSince map[string]time.Time
	nudge        chan struct{}
}

func newImageSync() *imageSync {
	return &imageSync{pins: map[string]int{}, uploads: map[string]int{}, pulling: map[string]bool{},
		missingSince: map[string]time.Time{}, nudge: make(chan struct{}, 1)}
}

func (y *imageSync) pin(h string) {
	y.mu.Lock()
	y.pins[h]++
	y.mu.Unlock()
}

func (y *imageSync) unpin(h string) {
	y.mu.Lock()
	if y.pins[h]--; y.pins[h] <= 0 {
		delete(y.pins, h)
	}
	y.mu.Unlock()
}

func (y *imageSync) pinned(h string) bool {
	y.mu.Lock()
	defer y.mu.Unlock()
	return y.pins[h] > 0 || y.pulling[h]
}

func (y *imageSync) startUpload(id string) {
	y.mu.Lock()
	y.uploads[id]++
	y.mu.Unlock()
}

func (y *imageSync) endUpload(id string) {
	y.mu.Lock()
	if y.uploads[id]--; y.uploads[id] <= 0 {
		delete(y.uploads, id)
	}
	y.mu.Unlock()
}

func (y *imageSync) uploading(id string) bool {
	y.mu.Lock()
	defer y.mu.Unlock()
	return y.uploads[id] > 0
}

// startPull marks a blob as being pulled; false if it already is.
func (y *imageSync) startPull(h string) bool {
	y.mu.Lock()
	defer y.mu.Unlock()
	if y.pulling[h] {
		return false
	}
	y.pulling[h] = true
	return true
}

func (y *imageSync) endPull(h string) {
	y.mu.Lock()
	delete(y.pulling, h)
	y.mu.Unlock()
}

// nudgeImageSync makes the sync loop look again now.
func (s *Server) nudgeImageSync() {
	select {
	case s.imageSync.nudge <- struct{}{}:
	default:
	}
}

// maxConcurrentPulls bounds the blobs a server copies at once.
const maxConcurrentPulls = 2

// runImageSync is the sync loop; it ends at shutdown.
func (s *Server) runImageSync() {
	defer s.wg.Done()
	ticker := time.NewTicker(s.config.ImageSyncInterval)
	defer ticker.Stop()
	pulls := make(chan struct{}, maxConcurrentPulls)
	for {
		state := s.fsm.State()
		ws := memdb.NewWatchSet()
		ws.Add(state.AbandonCh())
		ws.Add(state.S3ObjectsWatch())
		if images, err := state.Images(ws); err != nil {
			s.logger.Warn("image sync: read images", "error", err)
		} else {
			s.syncImages(images, pulls)
		}
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			select {
			case <-ticker.C:
			case <-s.imageSync.nudge:
			case <-s.shutdownCh:
			case <-ctx.Done():
			}
			cancel()
		}()
		_ = ws.WatchCtx(ctx)
		cancel()
		if s.isShuttingDown() {
			return
		}
	}
}

// syncImages runs one pass over the images.
func (s *Server) syncImages(images []*structs.Image, pulls chan struct{}) {
	self := s.config.NodeID
	alive := s.aliveServers()
	want := min(s.config.ImageReplicas, len(alive))
	blobs := map[string]*blobState{}
	for _, img := range images {
		if img.Status == structs.ImageSaving {
			s.checkStaleUpload(img, alive)
		}
		if !img.HasData() {
			continue
		}
		b := blobs[img.HashValue]
		if b == nil {
			b = &blobState{holders: map[string]bool{}}
			blobs[img.HashValue] = b
		}
		for _, l := range img.Locations {
			b.holders[l.NodeID] = true
		}
	}
	s.addS3Blobs(blobs)
	for hash, b := range blobs {
		local := s.blobs.Has(hash)
		switch {
		case local && !b.holders[self] && !s.imageSync.pinned(hash):
			s.recordLocation(hash, false)
		case !local && b.holders[self] && !s.imageSync.pinned(hash):
			s.logger.Warn("image data recorded here is missing from the store; forgetting it", "sha512", hash[:16])
			s.recordLocation(hash, true)
		}
		if local {
			continue
		}
		var holders, others []string
		for id := range alive {
			if b.holders[id] && id != self {
				holders = append(holders, alive[id])
			} else {
				others = append(others, id)
			}
		}
		need := want - len(holders)
		if need <= 0 || len(holders) == 0 {
			continue
		}
		rankServers(hash, others)
		for _, id := range others[:min(need, len(others))] {
			if id == self {
				s.startPull(hash, holders, pulls)
			}
		}
	}
	s.sweepBlobs(blobs)
}

// rankServers orders node ids by rendezvous hash for a blob, highest
// first: every server computes the same order.
func rankServers(hash string, ids []string) {
	score := func(id string) uint64 {
		sum := sha256.Sum256([]byte(hash + "\x00" + id))
		return binary.BigEndian.Uint64(sum[:8])
	}
	sort.Slice(ids, func(i, j int) bool {
		si, sj := score(ids[i]), score(ids[j])
		if si != sj {
			return si > sj
		}
		return ids[i] < ids[j]
	})
}

// recordLocation records (or forgets) this server as a holder.
func (s *Server) recordLocation(hash string, remove bool) {
	var resp structs.GenericResponse
	err := s.RPC("Image.Location", &structs.ImageLocationRequest{Entry: &structs.ImageLocationEntry{
		HashValue: hash, NodeID: s.config.NodeID, Remove: remove}}, &resp)
	if err != nil {
		s.logger.Debug("image sync: record location", "sha512", hash[:16], "remove", remove, "error", err)
	}
}

// startPull copies a blob from one of holders in the background.
func (s *Server) startPull(hash string, holders []string, pulls chan struct{}) {
	if !s.imageSync.startPull(hash) {
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer s.imageSync.endPull(hash)
		select {
		case pulls <- struct{}{}:
			defer func() { <-pulls }()
		case <-s.shutdownCh:
			return
		}
		rand.Shuffle(len(holders), func(i, j int) { holders[i], holders[j] = holders[j], holders[i] })
		for _, addr := range holders {
			if err := s.pullBlob(hash, addr); err != nil {
				s.logger.Warn("image sync: copy failed", "sha512", hash[:16], "from", addr, "error", err)
				continue
			}
			s.recordLocation(hash, false)
			s.logger.Info("image data copied", "sha512", hash[:16], "from", addr)
			return
		}
	}()
}

// pullBlob copies a blob from the server at addr into the store,
// checking its hash.
func (s *Server) pullBlob(hash, addr string) error {
	conn, resp, err := s.openBlob(addr, &structs.BlobGetRequest{HashValue: hash, Length: -1, Local: true})
	if err != nil {
		return err
	}
	defer conn.Close()
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-s.shutdownCh:
			conn.Close()
		case <-done:
		}
	}()
	w, err := s.blobs.NewWriter(0)
	if err != nil {
		return err
	}
	if _, err := io.CopyBuffer(w, io.LimitReader(conn, resp.Length), make([]byte, copyBufferSize)); err != nil {
		w.Abort()
		return err
	}
	if w.Written() != resp.Length {
		w.Abort()
		return io.ErrUnexpectedEOF
	}
	_, err = w.Commit(hash)
	return err
}

// checkStaleUpload returns to queued an image left saving by an upload
// that cannot finish: this server's, when it is not receiving it (it
// restarted), or, on the leader, another server's that gossip has not
// seen alive for a while.
func (s *Server) checkStaleUpload(img *structs.Image, alive map[string]string) {
	self := s.config.NodeID
	stale := false
	switch {
	case img.Uploader == self:
		stale = !s.imageSync.uploading(img.ID)
	case s.IsLeader() && alive[img.Uploader] == "":
		s.imageSync.mu.Lock()
		since, seen := s.imageSync.missingSince[img.ID]
		if !seen {
			s.imageSync.missingSince[img.ID] = time.Now()
		}
		s.imageSync.mu.Unlock()
		stale = seen && time.Since(since) > s.config.ImageUploaderTimeout
	default:
		s.imageSync.mu.Lock()
		delete(s.imageSync.missingSince, img.ID)
		s.imageSync.mu.Unlock()
	}
	if !stale {
		return
	}
	s.imageSync.mu.Lock()
	delete(s.imageSync.missingSince, img.ID)
	s.imageSync.mu.Unlock()
	s.logger.Warn("image upload interrupted: image back to queued", "image", img.ID, "uploader", img.Uploader)
	var resp structs.SingleImageResponse
	err := s.RPC("Image.Data", &structs.ImageDataRequest{Entry: &structs.ImageDataEntry{
		ImageID: img.ID, Op: structs.ImageDataAbort, NodeID: img.Uploader}}, &resp)
	if err != nil {
		s.logger.Debug("image sync: abort stale upload", "image", img.ID, "error", err)
	}
}

// stateIsCurrent reports whether this server's state has every entry
// the cluster committed, as far as it can tell: it knows a leader that
// it heard from lately (or is it), and has applied all it knows
// committed.
func (s *Server) stateIsCurrent() bool {
	if s.raft == nil {
		return false
	}
	if !s.IsLeader() {
		if addr, _ := s.raft.LeaderWithID(); addr == "" || time.Since(s.raft.LastContact()) > 5*time.Second {
			return false
		}
	}
	commit := s.raft.CommitIndex()
	return commit > 0 && s.raft.AppliedIndex() >= commit
}

// blobState is what the state says of one blob.
type blobState struct {
	// holders are the node ids recorded as holding it.
	holders map[string]bool
}

// sweepBlobs removes the blobs no image names, once they are old enough
// that no write of this server can still be on its way to naming them.
// It only trusts a state that is current: a server that just restarted
// replays its log, and until then its state would not name blobs that
// later entries do.
func (s *Server) sweepBlobs(referenced map[string]*blobState) {
	if !s.stateIsCurrent() {
		return
	}
	stored, err := s.blobs.List()
	if err != nil {
		s.logger.Warn("image sync: list blobs", "error", err)
		return
	}
	for _, b := range stored {
		if referenced[b.Hash] != nil || s.imageSync.pinned(b.Hash) || time.Since(b.ModTime) < s.config.ImageGCGrace {
			continue
		}
		if err := s.blobs.Remove(b.Hash); err != nil {
			s.logger.Warn("image sync: remove blob", "sha512", b.Hash[:16], "error", err)
			continue
		}
		s.logger.Info("image data no image names removed", "sha512", b.Hash[:16], "bytes", b.Size)
	}
}
