package ec2

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"encoding/xml"
	"strings"

	"golang.org/x/crypto/ssh"

	"github.com/stratus-cloud/stratus/structs"
)

// Key pairs are the caller's user's SSH key pairs (KeyPair.*, Nova's
// os-keypairs store): EC2 names them as Nova does, per user.

// keyPairID is the EC2 id of a key pair: "key-" and 17 hex digits of a
// hash of its user and name (a key pair has no UUID).
func keyPairID(kp *structs.KeyPair) string {
	sum := sha256.Sum256([]byte(kp.UserID + "/" + kp.Name))
	return ec2ID("key", hex.EncodeToString(sum[:]))
}

type keyPairItem struct {
	KeyPairID      string `xml:"keyPairId"`
	KeyName        string `xml:"keyName"`
	KeyFingerprint string `xml:"keyFingerprint"`
	KeyType        string `xml:"keyType"`
	PublicKey      string `xml:"publicKey,omitempty"`
	CreateTime     string `xml:"createTime,omitempty"`
}

func viewKeyPair(kp *structs.KeyPair) keyPairItem {
	kt := "rsa"
	if strings.HasPrefix(kp.PublicKey, "ssh-ed25519 ") {
		kt = "ed25519"
	}
	return keyPairItem{KeyPairID: keyPairID(kp), KeyName: kp.Name, KeyFingerprint: kp.Fingerprint, KeyType: kt,
		CreateTime: isoTime(kp.CreatedAt)}
}

// createKeyPair answers CreateKeyPair: a new RSA (2048 bits, KeyType
// rsa, the default) or Ed25519 key whose private half is answered once,
// in PEM, and never kept.
func createKeyPair(q *request) error {
	name, err := q.required("KeyName")
	if err != nil {
		return err
	}
	private, public, err := generateKeyPair(q.params.Get("KeyType"))
	if err != nil {
		return err
	}
	kp, err := q.storeKeyPair(name, public)
	if err != nil {
		return err
	}
	v := viewKeyPair(kp)
	return q.reply(&createKeyPairResponse{KeyPairID: v.KeyPairID, KeyName: v.KeyName, KeyFingerprint: v.KeyFingerprint, KeyMaterial: private})
}

// generateKeyPair makes a key of EC2's KeyType.
func generateKeyPair(keyType string) (private, public string, err error) {
	var signer any
	var block *pem.Block
	switch keyType {
	case "", "rsa":
		key, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			return "", "", err
		}
		signer, block = &key.PublicKey, &pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}
	case "ed25519":
		pub, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return "", "", err
		}
		if block, err = ssh.MarshalPrivateKey(priv, ""); err != nil {
			return "", "", err
		}
		signer = pub
	default:
		return "", "", ec2Error(codeInvalidParameterValue, "Invalid value '%s' for KeyType: expecting rsa or ed25519.", keyType)
	}
	sshPub, err := ssh.NewPublicKey(signer)
	if err != nil {
		return "", "", err
	}
	return string(pem.EncodeToMemory(block)), string(ssh.MarshalAuthorizedKey(sshPub)), nil
}

// importKeyPair answers ImportKeyPair: PublicKeyMaterial is the
// base64 of an OpenSSH public key, as the SDKs send it.
func importKeyPair(q *request) error {
	name, err := q.required("KeyName")
	if err != nil {
		return err
	}
	material, err := q.required("PublicKeyMaterial")
	if err != nil {
		return err
	}
	raw, err := base64.StdEncoding.DecodeString(material)
	if err != nil {
		// The AWS CLI sends file:// contents as they are.
		raw = []byte(material)
	}
	kp, err := q.storeKeyPair(name, string(raw))
	if err != nil {
		return err
	}
	v := viewKeyPair(kp)
	return q.reply(&importKeyPairResponse{KeyPairID: v.KeyPairID, KeyName: v.KeyName, KeyFingerprint: v.KeyFingerprint})
}

// storeKeyPair records a public key under name for the caller's user.
func (q *request) storeKeyPair(name, public string) (*structs.KeyPair, error) {
	pub, _, _, rest, err := ssh.ParseAuthorizedKey([]byte(public))
	if err != nil || strings.TrimSpace(string(rest)) != "" {
		return nil, ec2Error(codeKeyFormat, "Key is not in valid OpenSSH public key format")
	}
	kp := &structs.KeyPair{Name: name, UserID: q.caller.UserID, Type: "ssh", PublicKey: strings.TrimSpace(public),
		Fingerprint: strings.TrimPrefix(ssh.FingerprintLegacyMD5(pub), "MD5:")}
	var out structs.SingleKeyPairResponse
	if err := q.call("KeyPair.Create", &structs.KeyPairCreateRequest{KeyPair: kp}, &out); err != nil {
		if structs.KindOf(err) == structs.KindConflict {
			return nil, ec2Error(codeKeyPairDuplicate, "The keypair '%s' already exists.", name)
		}
		return nil, err
	}
	return out.KeyPair, nil
}

// describeKeyPairs answers DescribeKeyPairs: the user's key pairs, or
// those of KeyName.n / KeyPairId.n (each must exist), kept by the
// filters key-name and fingerprint.
func describeKeyPairs(q *request) error {
	var out structs.KeyPairListResponse
	if err := q.call("KeyPair.List", &structs.KeyPairListRequest{UserID: q.caller.UserID}, &out); err != nil {
		return err
	}
	names, ids := q.list("KeyName"), q.list("KeyPairId")
	resp := &describeKeyPairsResponse{}
	found := map[string]bool{}
	for _, kp := range out.KeyPairs {
		v := viewKeyPair(kp)
		if len(names) > 0 && !contains(names, v.KeyName) || len(ids) > 0 && !contains(ids, v.KeyPairID) {
			continue
		}
		if !keyPairMatches(v, q.filters()) {
			continue
		}
		found[v.KeyName], found[v.KeyPairID] = true, true
		if q.params.Get("IncludePublicKey") == "true" {
			v.PublicKey = kp.PublicKey
		}
		resp.KeyPairs = append(resp.KeyPairs, v)
	}
	for _, want := range append(names, ids...) {
		if !found[want] {
			return ec2Error(codeKeyPairNotFound, "The key pair '%s' does not exist", want)
		}
	}
	return q.reply(resp)
}

func keyPairMatches(v keyPairItem, filters []filter) bool {
	for _, f := range filters {
		switch f.Name {
		case "key-name":
			if !matches(f.Values, v.KeyName) {
				return false
			}
		case "fingerprint":
			if !matches(f.Values, v.KeyFingerprint) {
				return false
			}
		case "key-pair-id":
			if !matches(f.Values, v.KeyPairID) {
				return false
			}
		}
	}
	return true
}

// deleteKeyPair answers DeleteKeyPair by KeyName or KeyPairId. Deleting
// a key pair that does not exist succeeds, as in EC2.
func deleteKeyPair(q *request) error {
	name := q.params.Get("KeyName")
	if id := q.params.Get("KeyPairId"); name == "" && id != "" {
		var out structs.KeyPairListResponse
		if err := q.call("KeyPair.List", &structs.KeyPairListRequest{UserID: q.caller.UserID}, &out); err != nil {
			return err
		}
		for _, kp := range out.KeyPairs {
			if keyPairID(kp) == id {
				name = kp.Name
			}
		}
		if name == "" {
			return ec2Error(codeKeyPairNotFound, "The key pair '%s' does not exist", id)
		}
	}
	if name == "" {
		return ec2Error(codeMissingParameter, "The request must contain the parameter KeyName or KeyPairId.")
	}
	err := q.call("KeyPair.Delete", &structs.KeyPairDeleteRequest{UserID: q.caller.UserID, Names: []string{name}}, &structs.GenericResponse{})
	if err != nil && structs.KindOf(err) != structs.KindNotFound {
		return err
	}
	return q.reply(&returnResponse{XMLName: xml.Name{Local: "DeleteKeyPairResponse"}, Return: true})
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

type createKeyPairResponse struct {
	XMLName xml.Name `xml:"CreateKeyPairResponse"`
	meta
	KeyPairID      string `xml:"keyPairId"`
	KeyName        string `xml:"keyName"`
	KeyFingerprint string `xml:"keyFingerprint"`
	KeyMaterial    string `xml:"keyMaterial"`
}

type importKeyPairResponse struct {
	XMLName xml.Name `xml:"ImportKeyPairResponse"`
	meta
	KeyPairID      string `xml:"keyPairId"`
	KeyName        string `xml:"keyName"`
	KeyFingerprint string `xml:"keyFingerprint"`
}

type describeKeyPairsResponse struct {
	XMLName xml.Name `xml:"DescribeKeyPairsResponse"`
	meta
	KeyPairs []keyPairItem `xml:"keySet>item"`
}
