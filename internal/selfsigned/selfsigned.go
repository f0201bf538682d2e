// Package selfsigned makes the self-signed TLS certificate that a package
// installs until the operator has a real one, and that tests serve HTTPS
// with.
package selfsigned

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// PackageValidity is how long a package's certificate is valid: it stands in
// until the operator installs a real one, as the certificate of Blockbook's
// package does.
const PackageValidity = 10 * 365 * 24 * time.Hour

// Generate makes a self-signed ECDSA P-256 certificate for localhost
// and the loopback addresses, valid from an hour before now for validity,
// PEM-encoded. Each package build makes a new one, so no private key is kept
// in the repository.
func Generate(now time.Time, validity time.Duration) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generate key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, nil, fmt.Errorf("serial: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "localhost", Organization: []string{"blockbook self-signed"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true, // self-signed: clients pin it as its own root
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, fmt.Errorf("create certificate: %w", err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("marshal key: %w", err)
	}
	certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM = pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder})
	return certPEM, keyPEM, nil
}

// WritePair writes <base>.crt and <base>.key (the layout of -certfile) with
// a new certificate valid for a day, and returns a pool that trusts it.
func WritePair(base string) (*x509.CertPool, error) {
	certPEM, keyPEM, err := Generate(time.Now(), 24*time.Hour)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(base), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(base+".crt", certPEM, 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(base+".key", keyPEM, 0o600); err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(certPEM) {
		return nil, fmt.Errorf("the generated certificate does not parse")
	}
	return pool, nil
}
