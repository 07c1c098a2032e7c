package nova

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"math/big"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
)

// fingerprint validates an imported public key and returns Nova's
// fingerprint of it: MD5 of an SSH key, SHA-1 of an x509 certificate,
// colon-separated hex.
func fingerprint(keyType, publicKey string) (string, error) {
	if keyType == "x509" {
		block, _ := pem.Decode([]byte(publicKey))
		if block == nil || block.Type != "CERTIFICATE" {
			return "", badRequest("Keypair data is invalid: failed to generate X509 fingerprint")
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return "", badRequest("Keypair data is invalid: failed to generate X509 fingerprint")
		}
		sum := sha1.Sum(block.Bytes)
		return colonHex(sum[:]), nil
	}
	pub, _, _, rest, err := ssh.ParseAuthorizedKey([]byte(publicKey))
	if err != nil || strings.TrimSpace(string(rest)) != "" {
		return "", badRequest("Keypair data is invalid: failed to generate fingerprint")
	}
	return strings.TrimPrefix(ssh.FingerprintLegacyMD5(pub), "MD5:"), nil
}

func colonHex(b []byte) string {
	parts := make([]string, len(b))
	for i, c := range b {
		parts[i] = hex.EncodeToString([]byte{c})
	}
	return strings.Join(parts, ":")
}

// generatedComment ends the public key of a generated SSH key pair.
const generatedComment = "Generated-by-Stratus"

// generateKey makes a key pair for a user who gave no public key: an
// Ed25519 OpenSSH key, or for x509 an RSA key with a self-signed
// certificate naming the user and project, as Nova does.
func generateKey(keyType, userID, projectID string) (private, public, fp string, err error) {
	if keyType == "x509" {
		return generateX509(userID, projectID)
	}
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return "", "", "", err
	}
	block, err := ssh.MarshalPrivateKey(priv, generatedComment)
	if err != nil {
		return "", "", "", err
	}
	sshPub, err := ssh.NewPublicKey(pub)
	if err != nil {
		return "", "", "", err
	}
	public = strings.TrimSpace(string(ssh.MarshalAuthorizedKey(sshPub))) + " " + generatedComment + "\n"
	fp = strings.TrimPrefix(ssh.FingerprintLegacyMD5(sshPub), "MD5:")
	return string(pem.EncodeToMemory(block)), public, fp, nil
}

func generateX509(userID, projectID string) (private, public, fp string, err error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return "", "", "", err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return "", "", "", err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: userID, OrganizationalUnit: []string{projectID}},
		NotBefore:    now.Add(-time.Minute),
		NotAfter:     now.AddDate(10, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return "", "", "", err
	}
	sum := sha1.Sum(der)
	private = string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
	public = string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	return private, public, colonHex(sum[:]), nil
}
