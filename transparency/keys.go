package transparency

import (
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"strings"
)

// LoadPrivateKey loads an ed25519 signing key from a file path or from PEM
// text itself (as CTXPACK_SIGNING_KEY may hold either). The key must be a
// PKCS#8 "PRIVATE KEY" PEM block, as `openssl genpkey -algorithm ed25519`
// writes.
func LoadPrivateKey(pathOrPEM string) (ed25519.PrivateKey, error) {
	data, name, err := keySource(pathOrPEM)
	if err != nil {
		return nil, fmt.Errorf("signing key: %w", err)
	}
	k, err := ParsePrivateKey(data)
	if err != nil {
		return nil, fmt.Errorf("signing key %s: %w", name, err)
	}
	return k, nil
}

// LoadPublicKey loads an ed25519 verification key from a file path or PEM
// text: a PKIX "PUBLIC KEY" PEM block (`openssl pkey -in key.pem -pubout`).
func LoadPublicKey(pathOrPEM string) (ed25519.PublicKey, error) {
	data, name, err := keySource(pathOrPEM)
	if err != nil {
		return nil, fmt.Errorf("public key: %w", err)
	}
	k, err := ParsePublicKey(data)
	if err != nil {
		return nil, fmt.Errorf("public key %s: %w", name, err)
	}
	return k, nil
}

func keySource(pathOrPEM string) ([]byte, string, error) {
	if strings.Contains(pathOrPEM, "-----BEGIN ") {
		return []byte(pathOrPEM), "(PEM text)", nil
	}
	if pathOrPEM == "" {
		return nil, "", fmt.Errorf("no key file given")
	}
	data, err := os.ReadFile(pathOrPEM)
	if err != nil {
		return nil, "", err
	}
	return data, pathOrPEM, nil
}

// ParsePrivateKey parses a PKCS#8 PEM ed25519 private key.
func ParsePrivateKey(data []byte) (ed25519.PrivateKey, error) {
	block, err := onePEM(data)
	if err != nil {
		return nil, err
	}
	switch block.Type {
	case "PRIVATE KEY":
	case "PUBLIC KEY":
		return nil, fmt.Errorf("this is a public key: signing needs the ed25519 private key (PKCS#8 PEM)")
	default:
		return nil, unsupportedBlock(block.Type)
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("not a PKCS#8 private key: %w", err)
	}
	switch k := k.(type) {
	case ed25519.PrivateKey:
		return k, nil
	default:
		return nil, fmt.Errorf("%s: ctxpack signs with ed25519 keys only (create one with `openssl genpkey -algorithm ed25519 -out key.pem`)", keyKind(k))
	}
}

// ParsePublicKey parses a PKIX PEM ed25519 public key.
func ParsePublicKey(data []byte) (ed25519.PublicKey, error) {
	block, err := onePEM(data)
	if err != nil {
		return nil, err
	}
	switch block.Type {
	case "PUBLIC KEY":
	case "PRIVATE KEY", "ENCRYPTED PRIVATE KEY", "OPENSSH PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY":
		return nil, fmt.Errorf("this is a private key: verification needs the public key only (`openssl pkey -in key.pem -pubout -out key.pub`)")
	default:
		return nil, unsupportedBlock(block.Type)
	}
	k, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("not a PKIX public key: %w", err)
	}
	switch k := k.(type) {
	case ed25519.PublicKey:
		return k, nil
	default:
		return nil, fmt.Errorf("%s: ctxpack verifies ed25519 signatures only", keyKind(k))
	}
}

func onePEM(data []byte) (*pem.Block, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, fmt.Errorf("no PEM block found: want a PEM-encoded ed25519 key (PKCS#8 private, PKIX public)")
	}
	return block, nil
}

func unsupportedBlock(typ string) error {
	switch typ {
	case "ENCRYPTED PRIVATE KEY":
		return fmt.Errorf("the key is encrypted: give an unencrypted PKCS#8 ed25519 key (keep it in a secret store)")
	case "OPENSSH PRIVATE KEY":
		return fmt.Errorf("OpenSSH key format is not supported: give a PKCS#8 PEM ed25519 key (`openssl genpkey -algorithm ed25519 -out key.pem`)")
	case "RSA PRIVATE KEY", "RSA PUBLIC KEY":
		return fmt.Errorf("an RSA key (PEM %q): ctxpack uses ed25519 keys only", typ)
	case "EC PRIVATE KEY":
		return fmt.Errorf("an EC key (PEM %q): ctxpack uses ed25519 keys only", typ)
	}
	return fmt.Errorf("PEM block %q is not an ed25519 key (want PRIVATE KEY or PUBLIC KEY)", typ)
}

func keyKind(k any) string {
	switch k.(type) {
	case *rsa.PrivateKey, *rsa.PublicKey:
		return "an RSA key"
	case *ecdsa.PrivateKey, *ecdsa.PublicKey:
		return "an ECDSA key"
	case *ecdh.PrivateKey, *ecdh.PublicKey:
		return "an X25519/ECDH key"
	}
	return fmt.Sprintf("a %T key", k)
}
