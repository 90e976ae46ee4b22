package auth

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/golang-jwt/jwt/v5"
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
}

// JWTConfig says which JSON Web Tokens are valid.
type JWTConfig struct {
	// HS256SecretEnv names the environment variable holding the HS256
	// secret.
	HS256SecretEnv string `json:"hs256_secret_env"`
	// Issuer, when set, must be the token's iss.
	Issuer string `json:"issuer"`
	// Audience, when set, must be the token's aud or one of them.
	Audience string `json:"audience"`
}

// Authenticator checks credentials.
type Authenticator struct {
	tokens []staticToken
	parser *jwt.Parser
	secret []byte
}

type staticToken struct {
	token []byte
	user  string
}

// Load reads the auth file at path; the JWT secret comes from the
// environment.
func Load(path string) (*Authenticator, error) {
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
	a, err := New(f, os.Getenv)
	if err != nil {
		return nil, fmt.Errorf("auth file %s: %w", path, err)
	}
	return a, nil
}

// New builds an Authenticator from f, reading the JWT secret through
// getenv.
func New(f File, getenv func(string) string) (*Authenticator, error) {
	a := &Authenticator{}
	for tok, user := range f.Tokens {
		if tok == "" || user == "" {
			return nil, fmt.Errorf("tokens: a token and its user must not be empty (%q: %q)", tok, user)
		}
		a.tokens = append(a.tokens, staticToken{token: []byte(tok), user: user})
	}
	if j := f.JWT; j != nil {
		if j.HS256SecretEnv == "" {
			return nil, errors.New("jwt: hs256_secret_env names no environment variable")
		}
		if a.secret = []byte(getenv(j.HS256SecretEnv)); len(a.secret) == 0 {
			return nil, fmt.Errorf("jwt: the environment variable %s (hs256_secret_env) is empty or not set", j.HS256SecretEnv)
		}
		opts := []jwt.ParserOption{jwt.WithValidMethods([]string{"HS256"}), jwt.WithLeeway(Leeway), jwt.WithExpirationRequired()}
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
	if _, err := a.parser.ParseWithClaims(token, claims, func(*jwt.Token) (any, error) { return a.secret, nil }); err != nil {
		return "", fmt.Errorf("%w: %v", ErrUnauthorized, err)
	}
	if claims.Subject == "" {
		return "", fmt.Errorf("%w: the token has no sub", ErrUnauthorized)
	}
	return claims.Subject, nil
}
