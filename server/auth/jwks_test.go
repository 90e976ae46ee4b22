package auth

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/tack-run/tack/store/storetest"
)

// idp is an identity provider's JWKS endpoint whose keys a test changes,
// counting the fetches.
type idp struct {
	srv *httptest.Server

	mu      sync.Mutex
	keys    []map[string]string
	down    bool
	fetches int
}

func newIDP(t *testing.T) *idp {
	p := &idp{}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.fetches++
		if p.down {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": p.keys})
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *idp) serve(keys ...map[string]string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.keys = keys
}

func (p *idp) setDown(down bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = down
}

func (p *idp) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.fetches
}

func enc(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func rsaJWK(t *testing.T, kid string) (*rsa.PrivateKey, map[string]string) {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return k, map[string]string{"kty": "RSA", "kid": kid, "use": "sig", "n": enc(k.N.Bytes()), "e": enc(big.NewInt(int64(k.E)).Bytes())}
}

func ecJWK(t *testing.T, kid string) (*ecdsa.PrivateKey, map[string]string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := k.PublicKey.Bytes() // 0x04 || x || y
	if err != nil {
		t.Fatal(err)
	}
	return k, map[string]string{"kty": "EC", "kid": kid, "crv": "P-256", "alg": "ES256", "x": enc(pub[1:33]), "y": enc(pub[33:])}
}

func edJWK(t *testing.T, kid string) (ed25519.PrivateKey, map[string]string) {
	t.Helper()
	pub, k, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k, map[string]string{"kty": "OKP", "kid": kid, "crv": "Ed25519", "x": enc(pub)}
}

func jwksAuth(t *testing.T, p *idp, c *storetest.Clock, secret bool) *Authenticator {
	t.Helper()
	j := &JWTConfig{JWKSURL: p.srv.URL + "/jwks.json", Issuer: "https://id.example", Audience: "tack"}
	if secret {
		j.HS256SecretEnv = "SECRET"
	}
	a, err := New(File{JWT: j}, func(string) string { return "s3cret" }, WithClock(c.Now), WithHTTPClient(p.srv.Client()))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestJWKS(t *testing.T) {
	p := newIDP(t)
	rsaKey, rsaPub := rsaJWK(t, "r1")
	ecKey, ecPub := ecJWK(t, "e1")
	edKey, edPub := edJWK(t, "d1")
	otherRSA, _ := rsaJWK(t, "r1")
	_, encKey := rsaJWK(t, "enc")
	encKey["use"] = "enc"
	ps, psPub := rsaJWK(t, "ps")
	psPub["alg"] = "PS256"
	p.serve(rsaPub, ecPub, edPub, encKey, psPub)
	a := jwksAuth(t, p, storetest.NewClock(time.Unix(1e9, 0)), true)
	der, err := x509.MarshalPKIXPublicKey(&rsaKey.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, token, user string
	}{
		{"RS256", signKid(t, jwt.SigningMethodRS256, rsaKey, "r1", nil), "carol"},
		{"ES256", signKid(t, jwt.SigningMethodES256, ecKey, "e1", nil), "carol"},
		{"EdDSA", signKid(t, jwt.SigningMethodEdDSA, edKey, "d1", nil), "carol"},
		{"HS256 with the secret still", signKid(t, jwt.SigningMethodHS256, []byte("s3cret"), "", nil), "carol"},
		{"RS256 by another key with the same kid", signKid(t, jwt.SigningMethodRS256, otherRSA, "r1", nil), ""},
		{"RS256 without kid", signKid(t, jwt.SigningMethodRS256, rsaKey, "", nil), ""},
		{"ES256 naming the RSA key", signKid(t, jwt.SigningMethodES256, ecKey, "r1", nil), ""},
		{"RS256 naming the EC key", signKid(t, jwt.SigningMethodRS256, rsaKey, "e1", nil), ""},
		{"EdDSA naming the RSA key", signKid(t, jwt.SigningMethodEdDSA, edKey, "r1", nil), ""},
		{"HS256 keyed with the RSA public key", signKid(t, jwt.SigningMethodHS256, der, "r1", nil), ""},
		{"RS384", signKid(t, jwt.SigningMethodRS384, rsaKey, "r1", nil), ""},
		{"PS256 with a key the set marks PS256", signKid(t, jwt.SigningMethodPS256, ps, "ps", nil), ""},
		{"an encryption key", signKid(t, jwt.SigningMethodRS256, rsaKey, "enc", nil), ""},
		{"alg none", signKid(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, "r1", nil), ""},
		{"wrong audience", signKid(t, jwt.SigningMethodES256, ecKey, "e1", map[string]any{"aud": "other"}), ""},
	} {
		t.Run(tc.name, func(t *testing.T) { checkUser(t, a, tc.token, tc.user) })
	}
}

// TestJWKSRotation: keys are fetched once and cached; a kid the cache
// does not hold fetches the set again, at most once a minute; a rotated
// key is found without a restart; an unreachable provider leaves the
// cached keys in use.
func TestJWKSRotation(t *testing.T) {
	p := newIDP(t)
	k1, pub1 := rsaJWK(t, "k1")
	k2, pub2 := ecJWK(t, "k2")
	k3, pub3 := edJWK(t, "k3")
	p.serve(pub1)
	c := storetest.NewClock(time.Unix(1e9, 0))
	a := jwksAuth(t, p, c, false)
	tok1 := signKid(t, jwt.SigningMethodRS256, k1, "k1", nil)
	tok2 := signKid(t, jwt.SigningMethodES256, k2, "k2", nil)
	tok3 := signKid(t, jwt.SigningMethodEdDSA, k3, "k3", nil)
	steps := []struct {
		name    string
		do      func()
		token   string
		ok      bool
		fetches int // the provider's count after the step
	}{
		{"the first token fetches the set", nil, tok1, true, 1},
		{"the next is served from the cache", nil, tok1, true, 1},
		{"an unknown kid within the minute of that fetch does not", nil, tok2, false, 1},
		{"a minute later it fetches again", func() { c.Advance(61 * time.Second) }, tok2, false, 2},
		{"and again not within the minute", func() { c.Advance(30 * time.Second) }, tok2, false, 2},
		{"the provider rotates in k2: not seen within the minute", func() { p.serve(pub1, pub2) }, tok2, false, 2},
		{"a minute after the last fetch it is", func() { c.Advance(31 * time.Second) }, tok2, true, 3},
		{"the cached k1 still verifies", nil, tok1, true, 3},
		{"k1 rotated out stays cached until the set is fetched again", func() { p.serve(pub2, pub3); c.Advance(time.Minute) }, tok1, true, 3},
		{"k3 fetches the set, which drops k1", nil, tok3, true, 4},
		{"k1 is gone, and not fetched for within the minute", nil, tok1, false, 4},
		{"the provider is down: the cached keys still verify", func() { p.setDown(true); c.Advance(2 * time.Hour) }, tok2, true, 5},
		{"an unknown kid while it is down", func() { c.Advance(time.Minute) }, tok1, false, 6},
	}
	for _, s := range steps {
		if s.do != nil {
			s.do()
		}
		user, err := a.User(s.token)
		if got := err == nil && user == "carol"; got != s.ok {
			t.Fatalf("%s: User = %q, %v; want ok %v", s.name, user, err, s.ok)
		}
		if n := p.count(); n != s.fetches {
			t.Fatalf("%s: %d fetches, want %d", s.name, n, s.fetches)
		}
	}
}

func TestJWKSConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		jwt  JWTConfig
		err  string
	}{
		{"https", JWTConfig{JWKSURL: "https://id.example/.well-known/jwks.json"}, ""},
		{"http on loopback", JWTConfig{JWKSURL: "http://127.0.0.1:8080/jwks"}, ""},
		{"http elsewhere", JWTConfig{JWKSURL: "http://id.example/jwks"}, "must be https"},
		{"neither", JWTConfig{Issuer: "x"}, "neither hs256_secret_env nor jwks_url"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(File{JWT: &tc.jwt}, func(string) string { return "" })
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("New = %v, want %q", err, tc.err)
			}
		})
	}
}
