package remote_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testCA is a throwaway certificate authority.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	file string // PEM of cert
}

// newCA makes a CA and writes its certificate to dir/name.pem.
func newCA(t *testing.T, dir, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	ca := &testCA{cert: cert, key: key, file: filepath.Join(dir, name+".pem")}
	writePEM(t, ca.file, "CERTIFICATE", der)
	return ca
}

// issue makes a certificate for 127.0.0.1, good as server and as client,
// and writes it and its key to dir/name.pem and dir/name-key.pem.
func (ca *testCA) issue(t *testing.T, dir, name string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-key.pem")
	writePEM(t, certFile, "CERTIFICATE", der)
	writePEM(t, keyFile, "EC PRIVATE KEY", keyDER)
	return certFile, keyFile
}

func writePEM(t *testing.T, file, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// tlsProbe connects to addr over TLS as a gRPC client would, with the
// certificate in certFile (none if "") and trusting caFile, and reads the
// server's first bytes: nil if the server took the connection, else why
// not.
func tlsProbe(t *testing.T, addr, certFile, keyFile, caFile string) error {
	t.Helper()
	pool := x509.NewCertPool()
	data, err := os.ReadFile(caFile)
	if err != nil || !pool.AppendCertsFromPEM(data) {
		t.Fatalf("CA %s: %v", caFile, err)
	}
	cfg := &tls.Config{RootCAs: pool, NextProtos: []string{"h2"}}
	if certFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			t.Fatal(err)
		}
		// Sent whatever CAs the server says it accepts.
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &cert, nil }
	}
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: wait}, "tcp", addr, cfg)
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(wait))
	if _, err := conn.Write([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")); err != nil {
		return err
	}
	_, err = conn.Read(make([]byte, 1))
	return err
}

// runExample runs the example program with args and returns what it
// printed and how it exited.
func runExample(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut strings.Builder
	cmd := exec.Command(exampleBin(t), args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

// TestRemoteTLS: a node with --tls-cert, --tls-key and --tls-client-ca
// serves a caller whose certificate its CA signed, over mutual TLS in both
// directions (the example program's whole run: commands in, answers and
// events out), and refuses a connection without a certificate, with a
// certificate another CA signed, and a caller that trusts another CA.
func TestRemoteTLS(t *testing.T) {
	dir := t.TempDir()
	ca, other := newCA(t, dir, "ca"), newCA(t, dir, "other-ca")
	nodeCert, nodeKey := ca.issue(t, dir, "node")
	callerCert, callerKey := ca.issue(t, dir, "caller")
	strangerCert, strangerKey := other.issue(t, dir, "stranger")
	n := startNode(t, "--store", "memory", "--tls-cert", nodeCert, "--tls-key", nodeKey, "--tls-client-ca", ca.file)
	n.WaitLog(t, "listening on", "mutual TLS")

	t.Run("refused", func(t *testing.T) {
		for _, tc := range []struct {
			name, cert, key, ca, want string
		}{
			{"without a certificate", "", "", ca.file, "remote error: tls: certificate required"},
			{"with a certificate of another CA", strangerCert, strangerKey, ca.file, "remote error: tls: unknown certificate authority"},
			{"trusting another CA", callerCert, callerKey, other.file, "tls: failed to verify certificate: x509: certificate signed by unknown authority"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				if err := tlsProbe(t, n.Addr, tc.cert, tc.key, tc.ca); err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("%v, want %q", err, tc.want)
				}
			})
		}
	})
	t.Run("accepted", func(t *testing.T) {
		if err := tlsProbe(t, n.Addr, callerCert, callerKey, ca.file); err != nil {
			t.Fatalf("a caller with the right certificate: %v", err)
		}
	})

	t.Run("served", func(t *testing.T) {
		out, errOut, err := runExample(t, "-node", n.Addr, "-session", "tls1", "-tls-ca", ca.file, "-tls-cert", callerCert, "-tls-key", callerKey)
		if err != nil {
			t.Fatalf("example over TLS: %v\n%s%s", err, out, errOut)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if want := "created tls1 at " + n.Addr + " tack/tls1"; lines[0] != want {
			t.Fatalf("first line %q, want %q", lines[0], want)
		}
		if last := strings.Fields(lines[len(lines)-1]); len(last) != 3 || last[1] != "agent_end" || last[2] != "aborted" {
			t.Fatalf("the run did not end aborted:\n%s", out)
		}
	})

	t.Run("a caller of another CA", func(t *testing.T) {
		out, errOut, err := runExample(t, "-node", n.Addr, "-session", "tls2", "-tls-ca", ca.file, "-tls-cert", strangerCert, "-tls-key", strangerKey, "-timeout", "2s")
		if err == nil || out != "" || errOut != "remote: *eventsv1.CreateSession: future: timeout\n" {
			t.Fatalf("a caller whose certificate another CA signed was served: %v\n%s%s", err, out, errOut)
		}
	})
}

// TestNodeListenNeedsMutualTLS: tack node listens on a host other than
// loopback only when callers must hold a certificate of its client CA,
// and says what is missing otherwise.
func TestNodeListenNeedsMutualTLS(t *testing.T) {
	dir := t.TempDir()
	ca := newCA(t, dir, "ca")
	cert, key := ca.issue(t, dir, "node")
	callerCert, callerKey := ca.issue(t, dir, "caller")
	notLoopback := "tack: --listen 0.0.0.0:0 is not a loopback address: without --tls-client-ca the node asks callers for no certificate, " +
		"so anyone who reaches it could drive every session; give --tls-cert, --tls-key and --tls-client-ca (mutual TLS), " +
		"or listen on 127.0.0.1 and reach it through a tunnel, see docs/remote.md\n"
	together := "tack: --tls-cert and --tls-key go together (and --tls-client-ca needs both)\n"
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no TLS", []string{"--listen", "0.0.0.0:0"}, notLoopback},
		{"TLS without a client CA", []string{"--listen", "0.0.0.0:0", "--tls-cert", cert, "--tls-key", key}, notLoopback},
		{"a certificate without its key", []string{"--listen", "127.0.0.1:0", "--tls-cert", cert}, together},
		{"a client CA alone", []string{"--listen", "127.0.0.1:0", "--tls-client-ca", ca.file}, together},
		{"a key that is not the certificate's", []string{"--listen", "127.0.0.1:0", "--tls-cert", cert, "--tls-key", callerKey},
			"tack: TLS certificate " + cert + " and key " + callerKey + ": tls: private key does not match public key\n"},
		{"a CA file without a certificate", []string{"--listen", "127.0.0.1:0", "--tls-cert", cert, "--tls-key", key, "--tls-client-ca", key},
			"tack: TLS CA " + key + ": no PEM certificate in it\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr strings.Builder
			cmd := exec.Command(tackBin, append([]string{"node", "--store", "memory"}, tc.args...)...)
			cmd.Stderr = &stderr
			err := cmd.Run()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || stderr.String() != tc.want {
				t.Fatalf("%v, stderr %q\nwant exit status 1 and %q", err, stderr.String(), tc.want)
			}
		})
	}

	// With mutual TLS, any host: here every interface (the last --listen
	// wins over startNode's own).
	n := startNode(t, "--store", "memory", "--listen", "0.0.0.0:0", "--tls-cert", cert, "--tls-key", key, "--tls-client-ca", ca.file)
	n.WaitLog(t, "listening on", "mutual TLS")
	_, port, err := net.SplitHostPort(n.Addr)
	if err != nil {
		t.Fatal(err)
	}
	if err := tlsProbe(t, "127.0.0.1:"+port, callerCert, callerKey, ca.file); err != nil {
		t.Fatalf("a caller with the right certificate: %v", err)
	}
	if err := tlsProbe(t, "127.0.0.1:"+port, "", "", ca.file); err == nil || !strings.Contains(err.Error(), "certificate required") {
		t.Fatalf("a caller without a certificate: %v", err)
	}
}
