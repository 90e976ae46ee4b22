package config

import (
	"os"
	"path/filepath"
	"testing"
)

// env is a fake environment.
type env map[string]string

func (e env) lookup(k string) (string, bool) {
	v, ok := e[k]
	return v, ok
}

// writeConfig writes a configuration whose only provider is named name.
func writeConfig(t *testing.T, path, name string) {
	t.Helper()
	data := `{"providers": {"` + name + `": {"base_url": "http://127.0.0.1:8000/v1"}}}`
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestDiscover checks the discovery order: flag, $TACK_CONFIG, tack.json,
// then the environment.
func TestDiscover(t *testing.T) {
	tests := []struct {
		name     string
		flag     string // relative to the temporary directory
		env      env
		files    map[string]string // file → provider name; "bad" writes invalid JSON
		path     string            // want: the path used, "" for none
		provider string            // want: the only provider's name, "" for none
		baseURL  string            // want: its base URL when it comes from the environment
		wantErr  bool
	}{
		{
			name:     "flag wins",
			flag:     "flag.json",
			env:      env{PathEnv: "env.json", OpenAIKeyEnv: "sk"},
			files:    map[string]string{"flag.json": "fromflag", "env.json": "fromenv", FileName: "fromcwd"},
			path:     "flag.json",
			provider: "fromflag",
		},
		{
			name:    "flag names a missing file",
			flag:    "missing.json",
			files:   map[string]string{FileName: "fromcwd"},
			path:    "missing.json",
			wantErr: true,
		},
		{
			name:     "TACK_CONFIG before tack.json",
			env:      env{PathEnv: "env.json"},
			files:    map[string]string{"env.json": "fromenv", FileName: "fromcwd"},
			path:     "env.json",
			provider: "fromenv",
		},
		{
			name:    "TACK_CONFIG names a missing file",
			env:     env{PathEnv: "missing.json"},
			path:    "missing.json",
			wantErr: true,
		},
		{
			name:     "tack.json in the working directory",
			env:      env{OpenAIKeyEnv: "sk"},
			files:    map[string]string{FileName: "fromcwd"},
			path:     FileName,
			provider: "fromcwd",
		},
		{
			name:    "invalid tack.json",
			files:   map[string]string{FileName: "bad"},
			path:    FileName,
			wantErr: true,
		},
		{
			name:     "OPENAI_API_KEY and OPENAI_BASE_URL",
			env:      env{OpenAIKeyEnv: "sk", OpenAIBaseURLEnv: "http://127.0.0.1:4000/v1"},
			provider: OpenAIProvider,
			baseURL:  "http://127.0.0.1:4000/v1",
		},
		{
			name:     "OPENAI_API_KEY alone",
			env:      env{OpenAIKeyEnv: "sk"},
			provider: OpenAIProvider,
			baseURL:  DefaultOpenAIBaseURL,
		},
		{
			name: "OPENAI_BASE_URL alone is not enough",
			env:  env{OpenAIBaseURLEnv: "http://127.0.0.1:4000/v1"},
		},
		{
			name: "nothing",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Chdir(t.TempDir())
			for file, provider := range tt.files {
				if provider == "bad" {
					if err := os.WriteFile(file, []byte("{"), 0o600); err != nil {
						t.Fatal(err)
					}
					continue
				}
				writeConfig(t, file, provider)
			}
			c, path, err := discover(tt.flag, tt.env.lookup)
			equal(t, "path", path, tt.path)
			if tt.wantErr {
				if err == nil {
					t.Fatal("discover succeeded")
				}
				return
			}
			if err != nil {
				t.Fatalf("discover: %v", err)
			}
			var names []string
			for n := range c.Providers {
				names = append(names, n)
			}
			if tt.provider == "" {
				equal(t, "providers", len(names), 0)
				return
			}
			equal(t, "providers", names, []string{tt.provider})
			if tt.baseURL != "" {
				equal(t, "provider", *c.Providers[tt.provider], Provider{BaseURL: tt.baseURL, APIKeyEnv: OpenAIKeyEnv})
			}
		})
	}
}

// TestDiscoverReadsTheEnvironment runs the exported Discover against the
// process environment.
func TestDiscoverReadsTheEnvironment(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	path := filepath.Join(dir, "elsewhere.json")
	writeConfig(t, path, "fromvar")
	t.Setenv(PathEnv, path)
	c, got, err := Discover("")
	if err != nil {
		t.Fatalf("Discover: %v", err)
	}
	equal(t, "path", got, path)
	equal(t, "base URL", c.Providers["fromvar"].BaseURL, "http://127.0.0.1:8000/v1")
}

// TestDiscoverMCPOnly: a file with only mcp_servers takes its models from
// the environment, as with no file.
func TestDiscoverMCPOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tack.json")
	if err := os.WriteFile(path, []byte(`{"mcp_servers": {"fs": {"command": ["mcp-fs"]}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"", "sk-test"} {
		c, _, err := discover(path, env{OpenAIKeyEnv: key}.lookup)
		if err != nil {
			t.Fatalf("key %q: %v", key, err)
		}
		if _, ok := c.MCPServers["fs"]; !ok {
			t.Fatalf("key %q: no server fs in %+v", key, c)
		}
		if got := len(c.Providers); got != min(len(key), 1) {
			t.Fatalf("key %q: %d providers, want the environment's", key, got)
		}
	}
}
