// Package config reads Tack's configuration file
// (docs/protocol.md#configuration-and-storage) — its model providers, MCP
// servers, A2A agents and agents — and resolves model names to llm.Models
// streamed by llm/openai Providers.
//
// # Usage
//
// A configuration file names providers — OpenAI-compatible servers — and,
// optionally, their models:
//
//	{
//	  "default_model": "local/qwen3-8b",
//	  "providers": {
//	    "local": {
//	      "base_url": "http://127.0.0.1:8000/v1",
//	      "api_key_env": "LOCAL_API_KEY",
//	      "context_window": 32000,
//	      "models": {
//	        "qwen3-8b": {"context_window": 40000, "cost": {"input": 0.10, "output": 0.20, "cached_input": 0.05}},
//	        "llama-3.1-8b": {}
//	      }
//	    },
//	    "ollama": {"base_url": "http://127.0.0.1:11434/v1", "models": ["qwen3:8b", "llama3.1:8b"]}
//	  }
//	}
//
// Discover finds it: the --config path, else $TACK_CONFIG, else tack.json
// in the working directory, else none, and then $OPENAI_API_KEY (with
// $OPENAI_BASE_URL) makes a provider "openai" (FromEnv). Load and Parse
// read a file or bytes, reject unknown fields, and Validate it.
//
//	cfg, path, err := config.Discover(flagPath)
//	models := llm.Chain(config.NewResolver(cfg), script.NewResolver(dir))
//	m, err := models.Resolve("local/qwen3-8b", nil)
//
// The file may also name MCP servers ("mcp_servers", docs/mcp.md): their
// entries are tools/mcp.ServerConfig values, checked by
// mcp.ServerConfig.Validate as part of Validate.
//
// A model is named "provider/model", or by its bare name when exactly one
// provider lists it (Config.Lookup). Its context window resolves as the
// model's context_window > its provider's > the built-in table
// (BuiltinWindow: exact name, then the longest matching pattern such as
// "gpt-4o*", from windows.json) > unknown (0). Costs are dollars per
// million tokens; a cost without cached_input charges cached tokens as
// input.
//
// # Concurrency
//
// A Config is plain data: safe to read from many goroutines once loaded,
// not to change while in use. A Resolver is safe for concurrent use; each
// Resolve makes a new Provider. The built-in table is parsed once and
// read-only.
//
// # Testing
//
// The tests parse both forms of models, check every validation error,
// the discovery order with files and variables, the zero-configuration
// fallback, name resolution with its ambiguity errors, window precedence
// and the longest wildcard match, and resolve a model whose Provider
// streams from an httptest server.
package config
