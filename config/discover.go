package config

import (
	"errors"
	"io/fs"
	"os"
)

// Names Discover looks for.
const (
	// FileName is the configuration file looked for in the working
	// directory.
	FileName = "tack.json"
	// PathEnv names the environment variable that points at the file.
	PathEnv = "TACK_CONFIG"
	// OpenAIKeyEnv and OpenAIBaseURLEnv make the zero-configuration
	// provider "openai" when there is no file.
	OpenAIKeyEnv     = "OPENAI_API_KEY"
	OpenAIBaseURLEnv = "OPENAI_BASE_URL"
	// OpenAIProvider names the zero-configuration provider.
	OpenAIProvider = "openai"
	// DefaultOpenAIBaseURL is its base URL when OPENAI_BASE_URL is unset.
	DefaultOpenAIBaseURL = "https://api.openai.com/v1"
)

// Discover finds the configuration
// (docs/protocol.md#configuration-and-storage) and returns it with the
// path it came from: flagPath (the --config flag) when not empty,
// else the file $TACK_CONFIG names, else tack.json in the working
// directory, else none. A file named by the flag or the variable must
// exist. With no file, FromEnv makes the configuration, and the path is
// "".
func Discover(flagPath string) (*Config, string, error) {
	return discover(flagPath, os.LookupEnv)
}

// discover is Discover reading the environment through lookupEnv.
func discover(flagPath string, lookupEnv func(string) (string, bool)) (*Config, string, error) {
	path := flagPath
	if path == "" {
		path, _ = lookupEnv(PathEnv)
	}
	if path == "" {
		_, err := os.Stat(FileName)
		switch {
		case err == nil:
			path = FileName
		case !errors.Is(err, fs.ErrNotExist):
			return nil, "", err
		}
	}
	if path == "" {
		return FromEnv(lookupEnv), "", nil
	}
	c, err := Load(path)
	if err != nil {
		return nil, path, err
	}
	if len(c.Providers) == 0 {
		// A file with only mcp_servers: the models come from the
		// environment, as with no file.
		c.Providers = FromEnv(lookupEnv).Providers
	}
	return c, path, nil
}

// FromEnv returns the zero-configuration: when $OPENAI_API_KEY is set, one
// provider "openai" at $OPENAI_BASE_URL (default DefaultOpenAIBaseURL)
// with that key and no model list, so that any model name resolves to it;
// otherwise a configuration with no providers.
func FromEnv(lookupEnv func(string) (string, bool)) *Config {
	if key, _ := lookupEnv(OpenAIKeyEnv); key == "" {
		return &Config{}
	}
	base, _ := lookupEnv(OpenAIBaseURLEnv)
	if base == "" {
		base = DefaultOpenAIBaseURL
	}
	return &Config{Providers: map[string]*Provider{
		OpenAIProvider: {BaseURL: base, APIKeyEnv: OpenAIKeyEnv},
	}}
}
