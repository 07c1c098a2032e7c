package agent

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/stratus-cloud/stratus/imagestore"
	"github.com/stratus-cloud/stratus/structs"
)

// Dev mode's image: an empty 112 MiB qcow2 disk named cirros, as
// devstack's, public and owned by the admin project.
const (
	devImageID          = "6a9b7e2c-5d1f-4c3b-9e8a-0f1d2c3b4a50"
	devImageName        = "cirros"
	devImageVirtualSize = 112 << 20
)

// seedDevImage registers dev mode's image once the server leads and the
// identity is seeded. It is written straight into the local store and
// recorded active in one entry (Server.RegisterImage).
func (a *Agent) seedDevImage() error {
	if a.server == nil {
		return nil
	}
	var projects structs.IdentityListResponse
	if err := a.self.RPC("Identity.List", &structs.IdentityListRequest{Kind: structs.IdentityKindProjects}, &projects); err != nil {
		return err
	}
	owner := ""
	for _, p := range projects.Projects {
		if p.Name == "admin" && p.DomainID == structs.DefaultDomainID {
			owner = p.ID
		}
	}
	if owner == "" {
		return fmt.Errorf("the admin project is not seeded yet")
	}
	if err := a.registerDevBootImage(owner); err != nil {
		return err
	}
	var existing structs.SingleImageResponse
	err := a.self.RPC("Image.Get", &structs.ImageSpecificRequest{ImageID: devImageID}, &existing)
	if err == nil {
		return nil
	}
	if structs.KindOf(err) != structs.KindNotFound {
		return err
	}
	img, err := a.server.RegisterImage(&structs.Image{ID: devImageID, Name: devImageName, DiskFormat: "qcow2", ContainerFormat: "bare",
		Visibility: structs.ImagePublic, Owner: owner, Properties: map[string]string{"os_distro": "cirros"}},
		bytes.NewReader(imagestore.EmptyQCOW2(devImageVirtualSize)))
	if err != nil {
		return err
	}
	a.logger.Info("dev mode: seeded image cirros", "id", img.ID, "bytes", img.Size)
	return nil
}

// Dev mode's bootable image, when scripts/build-dev-image.sh built one:
// Debian's cloud kernel and a busybox initramfs on a FAT disk that
// syslinux boots; it asks DHCP for its address and prints its progress
// on the serial console.
const (
	devBootImageID      = "6a9b7e2c-5d1f-4c3b-9e8a-0f1d2c3b4a51"
	devBootImageName    = "stratus-dev"
	devBootImageDefault = "build/dev-image/stratus-dev.img"
)

// registerDevBootImage registers the bootable dev image from path, if
// the file exists; owner is the admin project.
func (a *Agent) registerDevBootImage(owner string) error {
	path := a.config.DevImage
	if path == "" {
		path = devBootImageDefault
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) && a.config.DevImage == "" {
		a.logger.Info("dev mode: no bootable dev image; scripts/build-dev-image.sh builds one", "path", path)
		return nil
	}
	if err != nil {
		return fmt.Errorf("dev image: %w", err)
	}
	defer f.Close()
	var existing structs.SingleImageResponse
	if err := a.self.RPC("Image.Get", &structs.ImageSpecificRequest{ImageID: devBootImageID}, &existing); err == nil {
		return nil
	} else if structs.KindOf(err) != structs.KindNotFound {
		return err
	}
	img, err := a.server.RegisterImage(&structs.Image{ID: devBootImageID, Name: devBootImageName, DiskFormat: "raw", ContainerFormat: "bare",
		Visibility: structs.ImagePublic, Owner: owner, MinDisk: 1,
		Properties: map[string]string{"os_distro": "debian", "os_type": "linux", "hw_disk_bus": "virtio"}}, f)
	if err != nil {
		return fmt.Errorf("dev image %s: %w", path, err)
	}
	a.logger.Info("dev mode: seeded bootable image "+devBootImageName, "id", img.ID, "bytes", img.Size, "path", path)
	return nil
}
