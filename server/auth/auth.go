package auth

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/tack-run/tack/policy"
)

// Leeway is how far past exp (and before nbf) a JWT is still accepted.
const Leeway = 60 * time.Second

// ErrUnauthorized is wrapped by every error of User: the credential is
// missing or not valid.
var ErrUnauthorized = errors.New("unauthorized")

// File is the auth file's content.
type File struct {
	// Tokens maps each static token to its user.
	Tokens map[string]string `json:"tokens"`
	// JWT configures JSON Web Tokens; nil accepts none.
	JWT *JWTConfig `json:"jwt"`
	// Grants say what each user may use, by user with "*" for everyone
	// (package policy); absent, every user has the default grant.
	Grants policy.Grants `json:"grants"`
	// Limits bound what each user does, by user with "*" for everyone;
	// absent, nothing is bounded.
	Limits policy.Limits `json:"limits"`
}

// JWTConfig says which JSON Web Tokens are valid: HS256 ones signed with
// a shared secret, and RS256, ES256 and EdDSA ones signed with a key of an
// identity provider's JWKS; at least one of the two.
type JWTConfig struct {
	// HS256SecretEnv names the environment variable holding the HS256
	// secret.
	HS256SecretEnv string `json:"hs256_secret_env"`
	// JWKSURL is where the identity provider serves its public keys (a
	// JWKS, e.g. https://id.example/.well-known/jwks.json): https, or http
	// on a loopback host.
	JWKSURL string `json:"jwks_url"`
	// Issuer, when set, must be the token's iss.
	Issuer string `json:"issuer"`
	// Audience, when set, must be the token's aud or one of them.
	Audience string `json:"audience"`
}

// Authenticator checks credentials, and holds what each user may use
// (Policy).
type Authenticator struct {
	tokens []staticToken
	parser *jwt.Parser
	secret []byte
	jwks   *keySet
	policy *policy.Policy
}

// Option configures an Authenticator.
type Option func(*options)

type options struct {
	now    func() time.Time
	client *http.Client
}

// WithClock reads the time from now (default time.Now): when a JWKS was
// last fetched.
func WithClock(now func() time.Time) Option { return func(o *options) { o.now = now } }

// WithHTTPClient fetches the JWKS with c (default: a client of its own).
func WithHTTPClient(c *http.Client) Option { return func(o *options) { o.client = c } }

type staticToken struct {
	token []byte
	user  string
}

// Load reads the auth file at path; the JWT secret comes from the
// environment.
func Load(path string, opts ...Option) (*Authenticator, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("auth file: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f File
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("auth file %s: %w", path, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("auth file %s: more than one JSON value", path)
	}
	a, err := New(f, os.Getenv, opts...)
	if err != nil {
		return nil, fmt.Errorf("auth file %s: %w", path, err)
	}
	return a, nil
}

// New builds an Authenticator from f, reading the JWT secret through
// getenv.
func New(f File, getenv func(string) string, opts ...Option) (*Authenticator, error) {
	o := options{now: time.Now, client: &http.Client{Timeout: fetchTimeout}}
	for _, opt := range opts {
		opt(&o)
	}
	a := &Authenticator{policy: &policy.Policy{Grants: f.Grants, Limits: f.Limits}}
	if err := a.policy.Validate(); err != nil {
		return nil, err
	}
	for tok, user := range f.Tokens {
		if tok == "" || user == "" {
			return nil, fmt.Errorf("tokens: a token and its user must not be empty (%q: %q)", tok, user)
		}
		a.tokens = append(a.tokens, staticToken{token: []byte(tok), user: user})
	}
	if j := f.JWT; j != nil {
		if j.HS256SecretEnv == "" && j.JWKSURL == "" {
			return nil, errors.New("jwt: neither hs256_secret_env nor jwks_url: no token could be verified")
		}
		var methods []string
		if j.HS256SecretEnv != "" {
			if a.secret = []byte(getenv(j.HS256SecretEnv)); len(a.secret) == 0 {
				return nil, fmt.Errorf("jwt: the environment variable %s (hs256_secret_env) is empty or not set", j.HS256SecretEnv)
			}
			methods = append(methods, "HS256")
		}
		if j.JWKSURL != "" {
			if err := checkJWKSURL(j.JWKSURL); err != nil {
				return nil, err
			}
			a.jwks = &keySet{url: j.JWKSURL, client: o.client, now: o.now}
			methods = append(methods, "RS256", "ES256", "EdDSA")
		}
		opts := []jwt.ParserOption{jwt.WithValidMethods(methods), jwt.WithLeeway(Leeway), jwt.WithExpirationRequired()}
		if j.Issuer != "" {
			opts = append(opts, jwt.WithIssuer(j.Issuer))
		}
		if j.Audience != "" {
			opts = append(opts, jwt.WithAudience(j.Audience))
		}
		a.parser = jwt.NewParser(opts...)
	}
	if len(a.tokens) == 0 && a.parser == nil {
		return nil, errors.New("no tokens and no jwt: nobody could sign in")
	}
	return a, nil
}

// User returns the user token names: a static token's user, or a valid
// JWT's sub. Any other token is an error wrapping ErrUnauthorized.
func (a *Authenticator) User(token string) (string, error) {
	if token == "" {
		return "", fmt.Errorf("%w: no credential: send Authorization: Bearer <token>", ErrUnauthorized)
	}
	// Every static token is compared in constant time, so the time taken
	// says nothing about how close a guess was.
	user := ""
	for _, t := range a.tokens {
		if subtle.ConstantTimeCompare(t.token, []byte(token)) == 1 {
			user = t.user
		}
	}
	if user != "" {
		return user, nil
	}
	if a.parser == nil {
		return "", fmt.Errorf("%w: unknown token", ErrUnauthorized)
	}
	claims := &jwt.RegisteredClaims{}
	if _, err := a.parser.ParseWithClaims(token, claims, a.key); err != nil {
		return "", fmt.Errorf("%w: %v", ErrUnauthorized, err)
	}
	if claims.Subject == "" {
		return "", fmt.Errorf("%w: the token has no sub", ErrUnauthorized)
	}
	return claims.Subject, nil
}

// key is the key t is verified with: the secret for HS256, the JWKS key
// its kid names for the others — whose type must be the one alg says
// (an RSA key never verifies ES256, nor a public key HS256).
func (a *Authenticator) key(t *jwt.Token) (any, error) {
	alg := t.Method.Alg()
	if alg == "HS256" {
		return a.secret, nil // offered only with a secret (the parser's methods)
	}
	if a.jwks == nil {
		return nil, fmt.Errorf("no key verifies %s", alg)
	}
	kid, _ := t.Header["kid"].(string)
	if kid == "" {
		return nil, fmt.Errorf("a %s token must name its key (kid)", alg)
	}
	v, err := a.jwks.key(kid)
	if err != nil {
		return nil, err
	}
	if v.alg != alg {
		return nil, fmt.Errorf("the key %q verifies %s, not %s", kid, v.alg, alg)
	}
	return v.key, nil
}

// Policy is what the auth file grants and limits (its "grants" and
// "limits"); with neither, every user has the default grant and no limit.
func (a *Authenticator) Policy() *policy.Policy { return a.policy }
