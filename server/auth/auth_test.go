package auth

import (
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

const secret = "s3cret-for-tests"

func newAuth(t *testing.T) *Authenticator {
	t.Helper()
	a, err := New(File{
		Tokens: map[string]string{"tk_alice": "alice", "tk_bob": "bob"},
		JWT:    &JWTConfig{HS256SecretEnv: "SECRET", Issuer: "https://id.example", Audience: "tack"},
	}, func(k string) string {
		if k == "SECRET" {
			return secret
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// sign makes a token signed with method and key, with claims over the
// valid defaults; a nil value removes a claim.
func sign(t *testing.T, method jwt.SigningMethod, key any, over map[string]any) string {
	t.Helper()
	return signKid(t, method, key, "", over)
}

// signKid is sign with kid in the header (none when empty).
func signKid(t *testing.T, method jwt.SigningMethod, key any, kid string, over map[string]any) string {
	t.Helper()
	claims := jwt.MapClaims{"sub": "carol", "iss": "https://id.example", "aud": "tack", "exp": time.Now().Add(time.Hour).Unix()}
	for k, v := range over {
		if v == nil {
			delete(claims, k)
		} else {
			claims[k] = v
		}
	}
	tok := jwt.NewWithClaims(method, claims)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// checkUser checks that a finds user in token; "" wants ErrUnauthorized.
func checkUser(t *testing.T, a *Authenticator, token, user string) {
	t.Helper()
	got, err := a.User(token)
	if user == "" {
		if !errors.Is(err, ErrUnauthorized) || got != "" {
			t.Fatalf("User = %q, %v; want ErrUnauthorized", got, err)
		}
		return
	}
	if err != nil || got != user {
		t.Fatalf("User = %q, %v; want %q", got, err, user)
	}
}

func TestUser(t *testing.T) {
	a := newAuth(t)
	hs := jwt.SigningMethodHS256
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for _, tc := range []struct {
		name, token, user string
	}{
		{"static token", "tk_alice", "alice"},
		{"another static token", "tk_bob", "bob"},
		{"unknown static token", "tk_mallory", ""},
		{"a prefix of a token", "tk_ali", ""},
		{"no token", "", ""},
		{"valid JWT", sign(t, hs, []byte(secret), nil), "carol"},
		{"aud as an array", sign(t, hs, []byte(secret), map[string]any{"aud": []string{"other", "tack"}}), "carol"},
		{"expired within leeway", sign(t, hs, []byte(secret), map[string]any{"exp": now.Add(-30 * time.Second).Unix()}), "carol"},
		{"expired beyond leeway", sign(t, hs, []byte(secret), map[string]any{"exp": now.Add(-2 * time.Minute).Unix()}), ""},
		{"not yet valid beyond leeway", sign(t, hs, []byte(secret), map[string]any{"nbf": now.Add(2 * time.Minute).Unix()}), ""},
		{"no exp", sign(t, hs, []byte(secret), map[string]any{"exp": nil}), ""},
		{"no sub", sign(t, hs, []byte(secret), map[string]any{"sub": nil}), ""},
		{"wrong iss", sign(t, hs, []byte(secret), map[string]any{"iss": "https://evil.example"}), ""},
		{"wrong aud", sign(t, hs, []byte(secret), map[string]any{"aud": "other"}), ""},
		{"aud array without ours", sign(t, hs, []byte(secret), map[string]any{"aud": []string{"a", "b"}}), ""},
		{"wrong secret", sign(t, hs, []byte("not the secret"), nil), ""},
		{"HS512 with the secret", sign(t, jwt.SigningMethodHS512, []byte(secret), nil), ""},
		{"alg none", sign(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, nil), ""},
		{"RS256", sign(t, jwt.SigningMethodRS256, rsaKey, nil), ""},
		{"garbage", "a.b.c", ""},
	} {
		t.Run(tc.name, func(t *testing.T) { checkUser(t, a, tc.token, tc.user) })
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TACK_TEST_JWT_SECRET", secret)
	for _, tc := range []struct{ name, file, err string }{
		{"tokens only", `{"tokens": {"tk": "alice"}}`, ""},
		{"jwt only", `{"jwt": {"hs256_secret_env": "TACK_TEST_JWT_SECRET"}}`, ""},
		{"unknown field", `{"tokens": {"tk": "alice"}, "users": {}}`, `unknown field "users"`},
		{"unknown jwt field", `{"jwt": {"hs256_secret_env": "TACK_TEST_JWT_SECRET", "alg": "none"}}`, `unknown field "alg"`},
		{"secret not set", `{"jwt": {"hs256_secret_env": "TACK_TEST_NO_SUCH_VAR"}}`, "TACK_TEST_NO_SUCH_VAR"},
		{"no secret env", `{"jwt": {}}`, "hs256_secret_env"},
		{"empty user", `{"tokens": {"tk": ""}}`, "must not be empty"},
		{"nothing", `{}`, "nobody could sign in"},
		{"not JSON", `{"tokens":`, "auth file"},
		{"two values", `{"tokens": {"tk": "a"}} {}`, "more than one"},
		{"grants and limits", `{"tokens": {"tk": "a"}, "grants": {"*": {"models": ["openai/*"], "tools": ["echo"], "scripts": false}, "a": {"tools": ["*"]}},
			"limits": {"*": {"max_sessions": 3, "max_running": 1, "requests_per_minute": 60}}}`, ""},
		{"a misspelt grant key", `{"tokens": {"tk": "a"}, "grants": {"*": {"tool": ["echo"]}}}`, `unknown field "tool"`},
		{"a misspelt limit", `{"tokens": {"tk": "a"}, "limits": {"*": {"max_session": 3}}}`, `unknown field "max_session"`},
		{"a negative limit", `{"tokens": {"tk": "a"}, "limits": {"a": {"max_running": -1}}}`, `limits["a"]: max_running must not be negative`},
		{"an empty pattern", `{"tokens": {"tk": "a"}, "grants": {"a": {"models": [""]}}}`, `grants["a"]: an empty name or pattern`},
		{"jwks only", `{"jwt": {"jwks_url": "https://id.example/jwks.json"}}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".json")
			if err := os.WriteFile(path, []byte(tc.file), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := Load(path)
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("Load = %v, want %q", err, tc.err)
			}
		})
	}
	if _, err := Load(filepath.Join(dir, "missing.json")); err == nil {
		t.Fatal("Load of a missing file succeeded")
	}
}
