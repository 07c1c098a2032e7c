package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"

	"github.com/stratus-cloud/stratus/structs"
)

// RBDConfig is where an RBD backend keeps its volumes: a pool of a Ceph
// cluster and the cephx user it acts as.
type RBDConfig struct {
	// Pool is the RBD pool (Cinder's rbd_pool), e.g. "volumes".
	Pool string
	// User is the cephx id without "client." (Cinder's rbd_user).
	User string
	// Conf is a ceph.conf; empty is the tools' default
	// (/etc/ceph/ceph.conf).
	Conf string
	// Keyring is the user's keyring file; empty is what Conf says.
	Keyring string
	// MonHosts are the monitors as "host:port"; empty is what Conf says.
	MonHosts []string
}

// RBD is the Ceph backend: volumes as RBD images named volume-<id>,
// snapshots as RBD snapshots snapshot-<id> of their volume's image,
// made and changed with the rbd CLI (and qemu-img, with QEMU's rbd
// driver, to write an image's data into a new volume).
//
// Like FilePool it deletes only what it made: every image it creates
// carries the image-meta key stratus.owned, set while the image is still
// under its temporary name (tmp-volume-<id>) and before it is renamed
// into place, so a crash never leaves a half-made volume under its real
// name and a leftover tmp- image is the backend's own to remove.
type RBD struct {
	cfg     RBDConfig
	rbd     string
	ceph    string
	qemuImg string
}

const rbdOwnedKey = "stratus.owned"

// NewRBD checks cfg and that the Ceph tools are installed.
func NewRBD(cfg RBDConfig) (*RBD, error) {
	if cfg.Pool == "" || cfg.User == "" {
		return nil, errors.New("rbd backend: pool and user are required")
	}
	b := &RBD{cfg: cfg}
	for name, dst := range map[string]*string{"rbd": &b.rbd, "ceph": &b.ceph, "qemu-img": &b.qemuImg} {
		path, err := exec.LookPath(name)
		if err != nil {
			return nil, fmt.Errorf("rbd backend: %s (ceph-common, qemu-utils) is required: %w", name, err)
		}
		*dst = path
	}
	return b, nil
}

// RBDVolumeImage is the RBD image name of volume id.
func RBDVolumeImage(id string) string { return "volume-" + safeID(id) }

func rbdSnapName(id string) string { return "snapshot-" + safeID(id) }

// Pool is the backend's pool.
func (b *RBD) Pool() string { return b.cfg.Pool }

// spec is pool/image[@snap].
func (b *RBD) spec(image string) string { return b.cfg.Pool + "/" + image }

// connArgs are the options naming the cluster and the user.
func (b *RBD) connArgs() []string {
	args := []string{"--id", b.cfg.User}
	if b.cfg.Conf != "" {
		args = append(args, "-c", b.cfg.Conf)
	}
	if b.cfg.Keyring != "" {
		args = append(args, "--keyring", b.cfg.Keyring)
	}
	if len(b.cfg.MonHosts) > 0 {
		args = append(args, "-m", strings.Join(b.cfg.MonHosts, ","))
	}
	return args
}

// qemuTarget is the image as QEMU's rbd driver names it.
func (b *RBD) qemuTarget(image string) string {
	esc := func(s string) string { return strings.ReplaceAll(s, ":", `\:`) }
	t := "rbd:" + b.spec(image) + ":id=" + b.cfg.User
	if b.cfg.Conf != "" {
		t += ":conf=" + esc(b.cfg.Conf)
	}
	if b.cfg.Keyring != "" {
		t += ":keyring=" + esc(b.cfg.Keyring)
	}
	if len(b.cfg.MonHosts) > 0 {
		t += ":mon_host=" + esc(strings.Join(b.cfg.MonHosts, ";"))
	}
	return t
}

// rbdImage is what `rbd ls -l` says of an image or one of its snapshots.
type rbdImage struct {
	Image    string `json:"image"`
	Snapshot string `json:"snapshot"`
	Size     int64  `json:"size"`
}

// list is every image and snapshot of the pool, one call.
func (b *RBD) list(ctx context.Context) ([]rbdImage, error) {
	out, err := b.output(ctx, b.rbd, "ls", "-l", "--format", "json", b.cfg.Pool)
	if err != nil {
		return nil, err
	}
	var imgs []rbdImage
	if err := json.Unmarshal(out, &imgs); err != nil {
		return nil, fmt.Errorf("rbd ls %s: %w", b.cfg.Pool, err)
	}
	return imgs, nil
}

// info returns image's size, and false when the image does not exist.
func (b *RBD) info(ctx context.Context, image string) (int64, bool, error) {
	imgs, err := b.list(ctx)
	if err != nil {
		return 0, false, err
	}
	for _, im := range imgs {
		if im.Image == image && im.Snapshot == "" {
			return im.Size, true, nil
		}
	}
	return 0, false, nil
}

// owned reports whether the backend created image.
func (b *RBD) owned(ctx context.Context, image string) (bool, error) {
	out, err := b.output(ctx, b.rbd, "image-meta", "list", "--format", "json", b.spec(image))
	if err != nil {
		return false, err
	}
	var meta map[string]string
	if err := json.Unmarshal(out, &meta); err != nil && len(strings.TrimSpace(string(out))) > 0 {
		return false, fmt.Errorf("rbd image-meta list %s: %w", image, err)
	}
	return meta[rbdOwnedKey] == "true", nil
}

// CreateVolume builds v's image from src and grows it to v.SizeGB; it
// returns the image as "pool/image".
func (b *RBD) CreateVolume(ctx context.Context, v *structs.Volume, src Source) (string, error) {
	image := RBDVolumeImage(v.ID)
	if err := b.build(ctx, image, v.SizeGB, src); err != nil {
		return "", fmt.Errorf("create volume %s: %w", v.ID, err)
	}
	return b.spec(image), nil
}

// build makes image from src under its temporary name, marks it as the
// backend's own and renames it into place; an image it made before is
// kept (and grown).
func (b *RBD) build(ctx context.Context, image string, sizeGB int, src Source) error {
	if _, ok, err := b.info(ctx, image); err != nil {
		return err
	} else if ok {
		own, err := b.owned(ctx, image)
		if err != nil {
			return err
		}
		if !own {
			return fmt.Errorf("image %s exists and the backend did not create it; it is left alone", b.spec(image))
		}
		return b.grow(ctx, image, sizeGB)
	}
	tmp := "tmp-" + image
	if _, ok, err := b.info(ctx, tmp); err != nil {
		return err
	} else if ok {
		if err := b.removeImage(ctx, tmp); err != nil {
			return err
		}
	}
	if err := b.fill(ctx, tmp, sizeGB, src); err != nil {
		_ = b.removeImage(ctx, tmp)
		return err
	}
	err := b.run(ctx, b.rbd, "image-meta", "set", b.spec(tmp), rbdOwnedKey, "true")
	if err == nil {
		err = b.grow(ctx, tmp, sizeGB)
	}
	if err == nil {
		err = b.run(ctx, b.rbd, "rename", b.spec(tmp), b.spec(image))
	}
	if err != nil {
		_ = b.removeImage(ctx, tmp)
	}
	return err
}

// fill creates image with src's data.
func (b *RBD) fill(ctx context.Context, image string, sizeGB int, src Source) error {
	switch {
	case src.SnapshotID != "":
		parent, err := b.findSnapshot(ctx, src.SnapshotID)
		if err != nil {
			return err
		}
		// A clone flattened at once: the new volume owes its snapshot
		// nothing, so the snapshot can go while the volume stays.
		if err := b.run(ctx, b.rbd, "clone", parent, b.spec(image)); err != nil {
			return err
		}
		return b.run(ctx, b.rbd, "flatten", "--no-progress", b.spec(image))
	case src.VolumeID != "":
		return b.run(ctx, b.rbd, "cp", "--no-progress", b.spec(RBDVolumeImage(src.VolumeID)), b.spec(image))
	case src.ImagePath != "":
		// qemu-img reads any format the cache holds and writes raw
		// through QEMU's rbd driver, creating the image.
		return b.run(ctx, b.qemuImg, "convert", "-q", "-O", "raw", src.ImagePath, b.qemuTarget(image))
	default:
		return b.run(ctx, b.rbd, "create", "--size", strconv.Itoa(sizeGB)+"G", b.spec(image))
	}
}

// grow resizes image to sizeGB unless it is that large already.
func (b *RBD) grow(ctx context.Context, image string, sizeGB int) error {
	size, ok, err := b.info(ctx, image)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("image %s does not exist", b.spec(image))
	}
	if size >= int64(sizeGB)<<30 {
		return nil
	}
	return b.run(ctx, b.rbd, "resize", "--no-progress", "--size", strconv.Itoa(sizeGB)+"G", b.spec(image))
}

// ExtendVolume grows v's image to v.SizeGB.
func (b *RBD) ExtendVolume(ctx context.Context, v *structs.Volume) error {
	image := RBDVolumeImage(v.ID)
	own, err := b.owned(ctx, image)
	if err != nil {
		return fmt.Errorf("extend volume %s: %w", v.ID, err)
	}
	if !own {
		return fmt.Errorf("extend volume %s: image %s was not created by the backend", v.ID, b.spec(image))
	}
	if err := b.grow(ctx, image, v.SizeGB); err != nil {
		return fmt.Errorf("extend volume %s: %w", v.ID, err)
	}
	return nil
}

// DeleteVolume removes volume id's image, and a leftover temporary
// one, if the backend made them.
func (b *RBD) DeleteVolume(ctx context.Context, id string) error {
	image := RBDVolumeImage(id)
	for _, name := range []string{"tmp-" + image, image} {
		_, ok, err := b.info(ctx, name)
		if err != nil {
			return fmt.Errorf("delete volume %s: %w", id, err)
		}
		if !ok {
			continue
		}
		own, err := b.owned(ctx, name)
		if err != nil {
			return fmt.Errorf("delete volume %s: %w", id, err)
		}
		if !own && name == image {
			return fmt.Errorf("delete volume %s: image %s was not created by the backend; it is left alone", id, b.spec(name))
		}
		if err := b.removeImage(ctx, name); err != nil {
			return fmt.Errorf("delete volume %s: %w", id, err)
		}
	}
	return nil
}

// removeImage deletes image; an image that still has snapshots is
// refused by rbd itself (the servers delete a volume's snapshots first).
func (b *RBD) removeImage(ctx context.Context, image string) error {
	return b.run(ctx, b.rbd, "rm", "--no-progress", b.spec(image))
}

// CreateSnapshot takes an RBD snapshot of the volume's image, protected
// so that volumes can be cloned from it; it returns pool/image@snap.
func (b *RBD) CreateSnapshot(ctx context.Context, snap *structs.VolumeSnapshot) (string, error) {
	if at, err := b.findSnapshot(ctx, snap.ID); err == nil {
		return at, b.protect(ctx, at)
	}
	image := RBDVolumeImage(snap.VolumeID)
	own, err := b.owned(ctx, image)
	if err != nil {
		return "", fmt.Errorf("snapshot %s: %w", snap.ID, err)
	}
	if !own {
		return "", fmt.Errorf("snapshot %s: the backend has no image for volume %s", snap.ID, snap.VolumeID)
	}
	at := b.spec(image) + "@" + rbdSnapName(snap.ID)
	if err := b.run(ctx, b.rbd, "snap", "create", "--no-progress", at); err != nil {
		return "", fmt.Errorf("snapshot %s: %w", snap.ID, err)
	}
	if err := b.protect(ctx, at); err != nil {
		return "", fmt.Errorf("snapshot %s: %w", snap.ID, err)
	}
	return at, nil
}

// protect protects snapshot at unless it is already.
func (b *RBD) protect(ctx context.Context, at string) error {
	out, err := b.output(ctx, b.rbd, "info", "--format", "json", at)
	if err != nil {
		return err
	}
	var info struct {
		Protected string `json:"protected"`
	}
	if err := json.Unmarshal(out, &info); err != nil {
		return fmt.Errorf("rbd info %s: %w", at, err)
	}
	if info.Protected == "true" {
		return nil
	}
	return b.run(ctx, b.rbd, "snap", "protect", at)
}

// errNoSnapshot: no image of the pool has the snapshot.
var errNoSnapshot = errors.New("no such snapshot")

// findSnapshot is snapshot id as pool/image@snap, on whichever of the
// backend's volume images has it.
func (b *RBD) findSnapshot(ctx context.Context, id string) (string, error) {
	imgs, err := b.list(ctx)
	if err != nil {
		return "", err
	}
	name := rbdSnapName(id)
	for _, im := range imgs {
		if im.Snapshot == name && strings.HasPrefix(im.Image, "volume-") {
			return b.spec(im.Image) + "@" + name, nil
		}
	}
	return "", fmt.Errorf("snapshot %s: %w", id, errNoSnapshot)
}

// DeleteSnapshot unprotects and removes snapshot id, if it exists.
func (b *RBD) DeleteSnapshot(ctx context.Context, id string) error {
	at, err := b.findSnapshot(ctx, id)
	if errors.Is(err, errNoSnapshot) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := b.run(ctx, b.rbd, "snap", "unprotect", at); err != nil && !strings.Contains(err.Error(), "not protected") {
		return fmt.Errorf("delete snapshot %s: %w", id, err)
	}
	if err := b.run(ctx, b.rbd, "snap", "rm", "--no-progress", at); err != nil {
		return fmt.Errorf("delete snapshot %s: %w", id, err)
	}
	return nil
}

// CapacityGB is the cluster's raw size as `ceph df` reports it.
func (b *RBD) CapacityGB() (int64, error) {
	out, err := b.output(context.Background(), b.ceph, "df", "--format", "json")
	if err != nil {
		return 0, err
	}
	var df struct {
		Stats struct {
			TotalBytes int64 `json:"total_bytes"`
		} `json:"stats"`
	}
	if err := json.Unmarshal(out, &df); err != nil {
		return 0, fmt.Errorf("ceph df: %w", err)
	}
	return df.Stats.TotalBytes >> 30, nil
}

func (b *RBD) run(ctx context.Context, bin string, args ...string) error {
	_, err := b.output(ctx, bin, args...)
	return err
}

// output runs a Ceph tool (with the connection options; qemu-img takes
// them in its target instead) and returns its stdout.
func (b *RBD) output(ctx context.Context, bin string, args ...string) ([]byte, error) {
	if bin != b.qemuImg {
		args = append(b.connArgs(), args...)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w: %s", bin, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}
