// Package auth turns a bearer credential into a user name for tack serve:
// static tokens from a file, each naming its user, and JSON Web Tokens —
// signed with HS256 by a shared secret, or with RS256, ES256 or EdDSA by a
// key of an identity provider's JWKS — whose sub names the user. The same
// file says what each user may use and how much (Policy).
//
// # Usage
//
//	a, err := auth.Load("auth.json") // {"tokens": {...}, "jwt": {...}}
//	user, err := a.User(token)      // ErrUnauthorized when it is not valid
//
// The file:
//
//	{"tokens": {"tk_alice": "alice"},
//	 "jwt": {"hs256_secret_env": "TACK_JWT_SECRET", "jwks_url": "https://id.example/.well-known/jwks.json",
//	         "issuer": "https://id.example", "audience": "tack"},
//	 "grants": {"*": {"tools": ["echo"]}, "alice": {"tools": ["*"]}},
//	 "limits": {"*": {"max_sessions": 20, "max_running": 2, "requests_per_minute": 600, "max_open_requests": 50}}}
//
// Every part may be absent (tokens or jwt must be there); unknown fields
// are an error. A JWT must be signed with HS256 by the secret in the named
// environment variable, or with RS256, ES256 or EdDSA by the JWKS key its
// kid names, whose type must be the one its alg says (none is never
// accepted); carry sub and exp, match issuer and audience when they are
// configured, and be within 60 s of its exp and nbf. Static token names
// and JWT subjects are one namespace.
//
// The JWKS is fetched on first use and cached by kid; a kid the cache does
// not hold fetches it again, at most once a minute (RefreshInterval), and
// a cache older than an hour (MaxKeyAge) is fetched again on its next
// use. While the provider cannot be reached the cached keys stay in use.
// Keys of other kinds (RSA under 2048 bits, other curves, "use": "enc",
// an "alg" other than the one of the key's type) are left out.
//
// # Concurrency
//
// An Authenticator is safe for concurrent use; its JWKS cache is guarded
// by a mutex (a fetch holds it: requests with JWKS tokens wait for it).
//
// # Testing
//
// The tests sign tokens with golang-jwt and check every way one can be
// refused; the JWKS tests serve key sets from an httptest server and move
// an injected clock (WithClock) through rotations.
package auth
