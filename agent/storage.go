package agent

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"

	"github.com/stratus-cloud/stratus/client"
	"github.com/stratus-cloud/stratus/client/storage"
	"github.com/stratus-cloud/stratus/structs"
)

// openStoragePool opens the volume pool of the client's storage block
// and says how large it is; nil when the agent keeps none.
func (a *Agent) openStoragePool() (storage.Backend, int64, error) {
	st := a.config.Client.Storage
	if st == nil {
		return nil, 0, nil
	}
	var pool storage.Backend
	var err error
	if st.Backend == structs.VolumeBackendRBD {
		cc := a.config.Client.Ceph
		pool, err = storage.NewRBD(storage.RBDConfig{Pool: cc.Pool, User: cc.User, Conf: cc.Conf,
			Keyring: cc.Keyring, MonHosts: cc.MonHosts})
	} else {
		pool, err = storage.NewFilePool(st.PoolDir)
	}
	if err != nil {
		return nil, 0, err
	}
	capacity := st.CapacityGB
	if capacity == 0 {
		if capacity, err = pool.CapacityGB(); err != nil {
			return nil, 0, err
		}
	}
	if capacity < 1 {
		return nil, 0, fmt.Errorf("storage pool %s has less than 1 GB", cmp.Or(st.PoolDir, "rbd"))
	}
	return pool, capacity, nil
}

// startStorage runs the storage agent of host c until shutdown: it
// drives the volumes the servers place on the host, fetching images
// through files.
func (a *Agent) startStorage(c *client.Client, pool storage.Backend, files storage.ImageFiles, secret string) error {
	ctx, cancel := context.WithCancel(context.Background())
	exports, err := a.startNBDExports(ctx)
	if err != nil {
		cancel()
		return err
	}
	sa, err := storage.New(storage.Config{HostID: c.HostID(), Region: a.config.Region, NodeSecret: secret,
		RPC: a.nodeRPC(), Backend: pool, Exports: exports, Images: files, Logger: a.logger.Named("storage"),
		Uploader: snapshotUploader{d: a.imageData}, WorkDir: filepath.Join(a.config.DataDir, "storage-upload")})
	if err != nil {
		cancel()
		return err
	}
	a.bgWG.Add(2)
	go func() {
		defer a.bgWG.Done()
		<-a.shutdownCh
		cancel()
	}()
	go func() {
		defer a.bgWG.Done()
		sa.Run(ctx)
	}()
	return nil
}
