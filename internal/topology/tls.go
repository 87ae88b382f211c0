package topology

import (
	"context"
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
	"strconv"
	"time"
)

// TLSFiles are the PEM files of a throw-away PKI made by NewTLSFiles: a
// CA, a server certificate for 127.0.0.1, ::1 and localhost signed by it,
// and a client certificate signed by it (for tls-auth-clients).
type TLSFiles struct {
	CA                    string // the CA certificate
	ServerCert, ServerKey string
	ClientCert, ClientKey string
}

// NewTLSFiles writes a fresh CA (ECDSA P-256, valid for a day) and the
// server and client certificates it signs into dir, and returns their
// paths. Two calls make two unrelated CAs: one does not trust the other's
// certificates. Errors: key generation or file writes.
func NewTLSFiles(dir string) (TLSFiles, error) {
	f := TLSFiles{
		CA:         filepath.Join(dir, "ca.pem"),
		ServerCert: filepath.Join(dir, "server.pem"), ServerKey: filepath.Join(dir, "server-key.pem"),
		ClientCert: filepath.Join(dir, "client.pem"), ClientKey: filepath.Join(dir, "client-key.pem"),
	}
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return f, err
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "lockbench test CA " + randomHex(4)},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return f, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return f, err
	}
	if err := writePEM(f.CA, "CERTIFICATE", caDER); err != nil {
		return f, err
	}
	leaf := func(serial int64, cn string, usage x509.ExtKeyUsage, certPath, keyPath string) error {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return err
		}
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial),
			Subject:      pkix.Name{CommonName: cn},
			NotBefore:    now.Add(-time.Hour),
			NotAfter:     now.Add(24 * time.Hour),
			KeyUsage:     x509.KeyUsageDigitalSignature,
			ExtKeyUsage:  []x509.ExtKeyUsage{usage},
		}
		if usage == x509.ExtKeyUsageServerAuth {
			tmpl.DNSNames = []string{"localhost"}
			tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			return err
		}
		kder, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			return err
		}
		if err := writePEM(certPath, "CERTIFICATE", der); err != nil {
			return err
		}
		return writePEM(keyPath, "EC PRIVATE KEY", kder)
	}
	if err := leaf(2, "127.0.0.1", x509.ExtKeyUsageServerAuth, f.ServerCert, f.ServerKey); err != nil {
		return f, err
	}
	if err := leaf(3, "lockbench client", x509.ExtKeyUsageClientAuth, f.ClientCert, f.ClientKey); err != nil {
		return f, err
	}
	return f, nil
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}

// StartTLS launches one standalone server, as Start(ctx, 1), that also
// listens for TLS on a second loopback port with f's server certificate.
// With clientCerts the server demands a client certificate signed by f.CA
// (tls-auth-clients yes); otherwise it asks for none. The plain port
// (Servers[0].Addr) stays open for the test's own checks; the TLS address
// is returned. Errors: as Start, or the TLS port could not be bound.
func StartTLS(ctx context.Context, f TLSFiles, clientCerts bool) (*Topology, string, error) {
	bin, err := redisServer()
	if err != nil {
		return nil, "", err
	}
	auth := "no"
	if clientCerts {
		auth = "yes"
	}
	var lastErr error
	for try := 0; try < 3; try++ { // the TLS port can be taken between probe and bind
		port, err := freePort()
		if err != nil {
			return nil, "", err
		}
		s, err := startOne(ctx, bin, "--tls-port", strconv.Itoa(port),
			"--tls-cert-file", f.ServerCert, "--tls-key-file", f.ServerKey,
			"--tls-ca-cert-file", f.CA, "--tls-auth-clients", auth)
		if err == nil {
			return &Topology{Servers: []*Server{s}}, net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), nil
		}
		lastErr = err
		if ctx.Err() != nil {
			return nil, "", ctx.Err()
		}
	}
	return nil, "", fmt.Errorf("topology: start a TLS redis-server: %w", lastErr)
}
