package selfsigned

import (
	"crypto/tls"
	"crypto/x509"
	"testing"
	"time"
)

// The certificate serves localhost and both loopback addresses, and no
// other name.
func TestGenerate(t *testing.T) {
	certPEM, keyPEM, err := Generate(time.Now(), PackageValidity)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	for _, host := range []string{"localhost", "127.0.0.1", "::1"} {
		if _, err := cert.Verify(x509.VerifyOptions{DNSName: host, Roots: pool}); err != nil {
			t.Errorf("%s: %v", host, err)
		}
	}
	if _, err := cert.Verify(x509.VerifyOptions{DNSName: "example.org", Roots: pool}); err == nil {
		t.Error("the certificate verifies for example.org")
	}
}
