package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// JWKS timing: a kid the cache does not hold makes the key set be fetched
// again, at most once per RefreshInterval; a cache older than MaxKeyAge
// is fetched again on its next use.
const (
	RefreshInterval = time.Minute
	MaxKeyAge       = time.Hour
	// fetchTimeout bounds one fetch of the key set.
	fetchTimeout = 10 * time.Second
	// maxJWKSBytes bounds the key set document.
	maxJWKSBytes = 1 << 20
	// minRSABits is the smallest RSA key accepted.
	minRSABits = 2048
)

// keySet is a JWKS (RFC 7517) fetched from a URL and cached by kid.
type keySet struct {
	url    string
	client *http.Client
	now    func() time.Time

	mu      sync.Mutex
	keys    map[string]verifier
	fetched time.Time // the last fetch, successful or not
	tried   bool
}

// verifier is a public key and the one JWT algorithm it verifies.
type verifier struct {
	alg string
	key any
}

// checkJWKSURL accepts an https URL, or an http one on a loopback host
// (an identity provider on the same machine).
func checkJWKSURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("jwt: jwks_url: %w", err)
	}
	switch {
	case u.Scheme == "https" && u.Host != "":
		return nil
	case u.Scheme == "http" && loopback(u.Hostname()):
		return nil
	}
	return fmt.Errorf("jwt: jwks_url %q must be https (http only on a loopback host)", raw)
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// key returns the key named kid: from the cache, else from the key set
// fetched again (at most once per RefreshInterval), so that keys an
// identity provider rotates in are found without a restart.
func (k *keySet) key(kid string) (verifier, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	now := k.now()
	v, ok := k.keys[kid]
	fresh := k.tried && now.Sub(k.fetched) < MaxKeyAge
	if ok && fresh {
		return v, nil
	}
	if k.tried && now.Sub(k.fetched) < RefreshInterval {
		if ok {
			return v, nil
		}
		return verifier{}, fmt.Errorf("no key %q in the JWKS (fetched again at most once a minute)", kid)
	}
	k.tried, k.fetched = true, now
	keys, err := k.fetch()
	if err != nil {
		if ok { // the provider is down: the key it served is still good
			return v, nil
		}
		return verifier{}, err
	}
	k.keys = keys
	if v, ok = keys[kid]; !ok {
		return verifier{}, fmt.Errorf("no key %q in the JWKS", kid)
	}
	return v, nil
}

// fetch reads the key set; keys it cannot use (another algorithm, an
// encryption key, a short RSA key) are left out.
func (k *keySet) fetch() (map[string]verifier, error) {
	ctx, cancel := context.WithTimeout(context.Background(), fetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, k.url, nil)
	if err != nil {
		return nil, fmt.Errorf("JWKS: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	res, err := k.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("JWKS: %w", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("JWKS: %s answered %s", k.url, res.Status)
	}
	var doc struct {
		Keys []jwk `json:"keys"`
	}
	if err := json.NewDecoder(io.LimitReader(res.Body, maxJWKSBytes)).Decode(&doc); err != nil {
		return nil, fmt.Errorf("JWKS: %s: %w", k.url, err)
	}
	keys := map[string]verifier{}
	for _, j := range doc.Keys {
		if v, err := j.verifier(); err == nil && j.Kid != "" {
			keys[j.Kid] = v
		}
	}
	return keys, nil
}

// jwk is one JSON Web Key, of the kinds a JWT is verified with.
type jwk struct {
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Use string `json:"use"`
	Alg string `json:"alg"`
	Crv string `json:"crv"`
	N   string `json:"n"`
	E   string `json:"e"`
	X   string `json:"x"`
	Y   string `json:"y"`
}

// errUnusable is a key this server does not verify with.
var errUnusable = errors.New("unusable key")

// verifier is the key and its algorithm: RSA keys verify RS256, P-256
// keys ES256, Ed25519 keys EdDSA. A key whose alg or use says otherwise
// is unusable.
func (j jwk) verifier() (verifier, error) {
	if j.Use != "" && j.Use != "sig" {
		return verifier{}, errUnusable
	}
	var v verifier
	switch {
	case j.Kty == "RSA":
		n, e := b64(j.N), b64(j.E)
		if len(n)*8 < minRSABits || len(e) == 0 || len(e) > 4 {
			return verifier{}, errUnusable
		}
		v = verifier{alg: "RS256", key: &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}}
	case j.Kty == "EC" && j.Crv == "P-256":
		x, y := b64(j.X), b64(j.Y)
		if len(x) != 32 || len(y) != 32 {
			return verifier{}, errUnusable
		}
		key, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
		if err != nil {
			return verifier{}, errUnusable
		}
		v = verifier{alg: "ES256", key: key}
	case j.Kty == "OKP" && j.Crv == "Ed25519":
		x := b64(j.X)
		if len(x) != ed25519.PublicKeySize {
			return verifier{}, errUnusable
		}
		v = verifier{alg: "EdDSA", key: ed25519.PublicKey(x)}
	default:
		return verifier{}, errUnusable
	}
	if j.Alg != "" && j.Alg != v.alg {
		return verifier{}, errUnusable
	}
	return v, nil
}

// b64 decodes base64url without padding; nil when it is not.
func b64(s string) []byte {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil
	}
	return b
}
