package remotetls

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"

	"github.com/asynkron/protoactor-go/remote"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
)

// Options returns protoactor remote options that serve TLS with the
// certificate in certFile and its key in keyFile (PEM), and dial other
// endpoints over TLS, presenting the same certificate.
//
// With peerCAFile (PEM, one or more CA certificates), TLS is mutual: the
// endpoint requires of everyone who connects a client certificate that CA
// signed, and accepts the endpoints it dials only with a server
// certificate that CA signed. With peerCAFile "", it asks no client
// certificate, and verifies the endpoints it dials against the system's
// roots.
//
// The options replace protoactor's gRPC server and dial options (whose
// default is a plaintext dial).
func Options(certFile, keyFile, peerCAFile string) ([]remote.ConfigOption, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("TLS certificate %s and key %s: %w", certFile, keyFile, err)
	}
	server := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	client := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if peerCAFile != "" {
		pool, err := loadPool(peerCAFile)
		if err != nil {
			return nil, err
		}
		server.ClientCAs, server.ClientAuth = pool, tls.RequireAndVerifyClientCert
		client.RootCAs = pool
	}
	return []remote.ConfigOption{
		remote.WithServerOptions(grpc.Creds(credentials.NewTLS(server))),
		remote.WithDialOptions(grpc.WithTransportCredentials(credentials.NewTLS(client))),
	}, nil
}

// loadPool reads the CA certificates of a PEM file.
func loadPool(file string) (*x509.CertPool, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("TLS CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("TLS CA %s: no PEM certificate in it", file)
	}
	return pool, nil
}
