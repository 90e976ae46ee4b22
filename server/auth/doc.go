// Package auth turns a bearer credential into a user name for tack serve:
// static tokens from a file, each naming its user, and JSON Web Tokens
// signed with HS256, whose sub names the user.
//
// # Usage
//
//	a, err := auth.Load("auth.json") // {"tokens": {...}, "jwt": {...}}
//	user, err := a.User(token)      // ErrUnauthorized when it is not valid
//
// The file:
//
//	{"tokens": {"tk_alice": "alice"},
//	 "jwt": {"hs256_secret_env": "TACK_JWT_SECRET", "issuer": "https://id.example", "audience": "tack"}}
//
// Either part may be absent; unknown fields are an error. A JWT must be
// signed with HS256 by the secret in the named environment variable (no
// other algorithm is accepted, none ever), carry sub and exp, match
// issuer and audience when they are configured, and be within 60 s of
// its exp and nbf. Static token names and JWT subjects are one namespace.
//
// # Concurrency
//
// An Authenticator is read-only after Load and safe for concurrent use.
//
// # Testing
//
// The tests sign tokens with golang-jwt and check every way one can be
// refused.
package auth
