package instancedata

// PasswordFile is the OpenStack file a guest reads and posts its
// encrypted password to; the metadata service serves it itself, since
// it is also written.
const PasswordFile = passwordName

// EC2 answers path (below the version) of the EC2 format at version
// ("latest" or one of EC2Versions): a directory's listing or a value;
// ok is false for an unknown version or a path not in the tree.
func (d *InstanceData) EC2(version string, path []string) (string, bool) {
	v, ok := ec2Version(version)
	if !ok {
		return "", false
	}
	return lookupTree(d.ec2Tree(v), path)
}

// OpenStackListing lists the files of the OpenStack format at version
// ("latest" or one of OpenStackVersions); ok is false for an unknown
// version.
func (d *InstanceData) OpenStackListing(version string) ([]string, bool) {
	v, ok := openStackVersion(version)
	if !ok {
		return nil, false
	}
	return d.openStackListing(v), true
}

// HasPassword reports whether version of the OpenStack format has the
// password file (from 2013-04-04 on); false for an unknown version.
func HasPassword(version string) bool {
	v, ok := openStackVersion(version)
	return ok && atLeast(v, grizzly)
}

// OpenStackFile is one file of the OpenStack format at version, encoded
// as the guest reads it; ok is false for an unknown version or a file
// that version does not have. The password is not among them
// (PasswordFile).
func (d *InstanceData) OpenStackFile(version, name string) ([]byte, bool, error) {
	v, ok := openStackVersion(version)
	if !ok {
		return nil, false, nil
	}
	return d.openStackFile(v, name)
}
