package openai

// The streams below are written byte for byte as each server sends them
// (field order, nulls, comments and all), after their public docs and
// issue reports.

// openAIText is OpenAI (gpt-4o) with include_usage: a role chunk, content
// deltas with obfuscation padding, the finish chunk, then usage in a
// final chunk with empty choices. 1024 of the 1200 prompt tokens were
// cached.
const openAIText = `data: {"id":"chatcmpl-BRvS4yTqJHxK","object":"chat.completion.chunk","created":1745930432,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_f5bdcc3276","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"mXh0"}

data: {"id":"chatcmpl-BRvS4yTqJHxK","object":"chat.completion.chunk","created":1745930432,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_f5bdcc3276","choices":[{"index":0,"delta":{"content":"Hello"},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"Qn"}

data: {"id":"chatcmpl-BRvS4yTqJHxK","object":"chat.completion.chunk","created":1745930432,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_f5bdcc3276","choices":[{"index":0,"delta":{"content":", world."},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"8Y"}

data: {"id":"chatcmpl-BRvS4yTqJHxK","object":"chat.completion.chunk","created":1745930432,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_f5bdcc3276","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null,"obfuscation":"kL3"}

data: {"id":"chatcmpl-BRvS4yTqJHxK","object":"chat.completion.chunk","created":1745930432,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_f5bdcc3276","choices":[],"usage":{"prompt_tokens":1200,"completion_tokens":12,"total_tokens":1212,"prompt_tokens_details":{"cached_tokens":1024,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}},"obfuscation":"p"}

data: [DONE]

`

// openAIParallel is OpenAI streaming two parallel tool calls: id and name
// in each call's first delta, then argument pieces under its index.
const openAIParallel = `data: {"id":"chatcmpl-BRw1","object":"chat.completion.chunk","created":1745930500,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_f5bdcc3276","choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_FthC9qRpsL5kBpwwyw6c7j4k","type":"function","function":{"name":"get_weather","arguments":""}}],"refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-BRw1","object":"chat.completion.chunk","created":1745930500,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_f5bdcc3276","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"ci"}}]},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-BRw1","object":"chat.completion.chunk","created":1745930500,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_f5bdcc3276","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"ty\": \"Paris\"}"}}]},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-BRw1","object":"chat.completion.chunk","created":1745930500,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_f5bdcc3276","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_uI3sjZa81wB2TwLJ5kbJcq4z","type":"function","function":{"name":"get_time","arguments":""}}]},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-BRw1","object":"chat.completion.chunk","created":1745930500,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_f5bdcc3276","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"{\"tz\": \"CET\"}"}}]},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-BRw1","object":"chat.completion.chunk","created":1745930500,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_f5bdcc3276","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}],"usage":null}

data: {"id":"chatcmpl-BRw1","object":"chat.completion.chunk","created":1745930500,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_f5bdcc3276","choices":[],"usage":{"prompt_tokens":85,"completion_tokens":46,"total_tokens":131,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}}

data: [DONE]

`

// openAIReasoning is an o-series model: no reasoning text is streamed,
// but 448 of the 500 completion tokens were reasoning.
const openAIReasoning = `data: {"id":"chatcmpl-o4","object":"chat.completion.chunk","created":1745930600,"model":"o4-mini-2025-04-16","service_tier":"default","system_fingerprint":null,"choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-o4","object":"chat.completion.chunk","created":1745930600,"model":"o4-mini-2025-04-16","service_tier":"default","system_fingerprint":null,"choices":[{"index":0,"delta":{"content":"42"},"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-o4","object":"chat.completion.chunk","created":1745930600,"model":"o4-mini-2025-04-16","service_tier":"default","system_fingerprint":null,"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}

data: {"id":"chatcmpl-o4","object":"chat.completion.chunk","created":1745930600,"model":"o4-mini-2025-04-16","service_tier":"default","system_fingerprint":null,"choices":[],"usage":{"prompt_tokens":30,"completion_tokens":500,"total_tokens":530,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":448,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}}

data: [DONE]

`

// openAIRefusal is a refusal: refusal deltas instead of content.
const openAIRefusal = `data: {"id":"chatcmpl-r","object":"chat.completion.chunk","created":1745930700,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"role":"assistant","content":null,"refusal":""},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-r","object":"chat.completion.chunk","created":1745930700,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{"refusal":"I can't help with that."},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-r","object":"chat.completion.chunk","created":1745930700,"model":"gpt-4o-2024-08-06","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"usage":null}

data: [DONE]

`

// openAILength stops at max_tokens.
const openAILength = `data: {"id":"chatcmpl-l","object":"chat.completion.chunk","created":1745930800,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":"Once upon"},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-l","object":"chat.completion.chunk","created":1745930800,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"length"}]}

data: [DONE]

`

// vLLMReasoning is vLLM serving Qwen3 with --reasoning-parser qwen3:
// reasoning_content deltas (vLLM 0.10 sends reasoning as well, with the
// same text), no usage in the content chunks, and a usage chunk with
// empty choices.
const vLLMReasoning = `data: {"id":"chatcmpl-8c1f0a9e2b7d4f6a","object":"chat.completion.chunk","created":1745931000,"model":"Qwen/Qwen3-8B","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-8c1f0a9e2b7d4f6a","object":"chat.completion.chunk","created":1745931000,"model":"Qwen/Qwen3-8B","choices":[{"index":0,"delta":{"reasoning_content":"The user greets me."},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-8c1f0a9e2b7d4f6a","object":"chat.completion.chunk","created":1745931000,"model":"Qwen/Qwen3-8B","choices":[{"index":0,"delta":{"reasoning_content":" Reply kindly.","reasoning":" Reply kindly."},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-8c1f0a9e2b7d4f6a","object":"chat.completion.chunk","created":1745931000,"model":"Qwen/Qwen3-8B","choices":[{"index":0,"delta":{"content":"\n\nHi there!"},"logprobs":null,"finish_reason":null}]}

data: {"id":"chatcmpl-8c1f0a9e2b7d4f6a","object":"chat.completion.chunk","created":1745931000,"model":"Qwen/Qwen3-8B","choices":[{"index":0,"delta":{"content":""},"logprobs":null,"finish_reason":"stop","stop_reason":null}]}

data: {"id":"chatcmpl-8c1f0a9e2b7d4f6a","object":"chat.completion.chunk","created":1745931000,"model":"Qwen/Qwen3-8B","choices":[],"usage":{"prompt_tokens":18,"total_tokens":40,"completion_tokens":22,"prompt_tokens_details":null}}

data: [DONE]

`

// ollamaTools is Ollama's /v1 endpoint: each whole tool call in one
// chunk, and no usage (Ollama before it honoured include_usage).
const ollamaTools = `data: {"id":"chatcmpl-18","object":"chat.completion.chunk","created":1744446075,"model":"qwen2.5-coder:7b","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":"","tool_calls":[{"id":"call_wteop8bt","index":0,"type":"function","function":{"name":"run_command","arguments":"{\"command\":\"ls\"}"}}]},"finish_reason":null}]}

data: {"id":"chatcmpl-18","object":"chat.completion.chunk","created":1744446075,"model":"qwen2.5-coder:7b","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":"","tool_calls":[{"id":"call_rk2xye1l","index":1,"type":"function","function":{"name":"run_command","arguments":"{\"command\":\"ls -l\"}"}}]},"finish_reason":null}]}

data: {"id":"chatcmpl-18","object":"chat.completion.chunk","created":1744446075,"model":"qwen2.5-coder:7b","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"tool_calls"}]}

data: [DONE]

`

// ollamaOldTools is an older Ollama: whole calls without id or index, and
// finish reason "stop".
const ollamaOldTools = `data: {"id":"chatcmpl-447","object":"chat.completion.chunk","created":1732870000,"model":"llama3.1:8b","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":"","tool_calls":[{"type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Boston\"}"}}]},"finish_reason":null}]}

data: {"id":"chatcmpl-447","object":"chat.completion.chunk","created":1732870000,"model":"llama3.1:8b","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":"","tool_calls":[{"type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},"finish_reason":null}]}

data: {"id":"chatcmpl-447","object":"chat.completion.chunk","created":1732870000,"model":"llama3.1:8b","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"stop"}]}

data: [DONE]

`

// ollamaThinking is Ollama with a thinking model: reasoning deltas.
const ollamaThinking = `data: {"id":"chatcmpl-52","object":"chat.completion.chunk","created":1754000000,"model":"qwen3:8b","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning":"Short answer."},"finish_reason":null}]}

data: {"id":"chatcmpl-52","object":"chat.completion.chunk","created":1754000000,"model":"qwen3:8b","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":"Yes."},"finish_reason":null}]}

data: {"id":"chatcmpl-52","object":"chat.completion.chunk","created":1754000000,"model":"qwen3:8b","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"stop"}]}

data: [DONE]

`

// llamaCppTools is llama.cpp's server (--jinja): reasoning_content, a
// first call whose deltas carry no index at all, a second one with index
// -1, and usage with timings in the finish chunk.
const llamaCppTools = `data: {"choices":[{"finish_reason":null,"index":0,"delta":{"role":"assistant","content":null}}],"created":1745932000,"id":"chatcmpl-3dkGMXz4B3sKi2FcDRWqT7ZgI8YbPL2u","model":"gpt-3.5-turbo","system_fingerprint":"b5601-d3b8c1a2","object":"chat.completion.chunk"}

data: {"choices":[{"finish_reason":null,"index":0,"delta":{"reasoning_content":"Weather and time needed."}}],"created":1745932000,"id":"chatcmpl-3dkGMXz4B3sKi2FcDRWqT7ZgI8YbPL2u","model":"gpt-3.5-turbo","system_fingerprint":"b5601-d3b8c1a2","object":"chat.completion.chunk"}

data: {"choices":[{"finish_reason":null,"index":0,"delta":{"tool_calls":[{"id":"P9x2kLmQ7rTzW1vB4nYc8dHs","type":"function","function":{"name":"get_weather","arguments":"{\"city\":"}}]}}],"created":1745932000,"id":"chatcmpl-3dkGMXz4B3sKi2FcDRWqT7ZgI8YbPL2u","model":"gpt-3.5-turbo","system_fingerprint":"b5601-d3b8c1a2","object":"chat.completion.chunk"}

data: {"choices":[{"finish_reason":null,"index":0,"delta":{"tool_calls":[{"function":{"arguments":"\"Paris\"}"}}]}}],"created":1745932000,"id":"chatcmpl-3dkGMXz4B3sKi2FcDRWqT7ZgI8YbPL2u","model":"gpt-3.5-turbo","system_fingerprint":"b5601-d3b8c1a2","object":"chat.completion.chunk"}

data: {"choices":[{"finish_reason":null,"index":0,"delta":{"tool_calls":[{"index":-1,"id":"Qw3eR5tY7uI9oP1aS3dF5gH7","type":"function","function":{"name":"get_time","arguments":""}}]}}],"created":1745932000,"id":"chatcmpl-3dkGMXz4B3sKi2FcDRWqT7ZgI8YbPL2u","model":"gpt-3.5-turbo","system_fingerprint":"b5601-d3b8c1a2","object":"chat.completion.chunk"}

data: {"choices":[{"finish_reason":"tool_calls","index":0,"delta":{}}],"created":1745932000,"id":"chatcmpl-3dkGMXz4B3sKi2FcDRWqT7ZgI8YbPL2u","model":"gpt-3.5-turbo","system_fingerprint":"b5601-d3b8c1a2","object":"chat.completion.chunk","usage":{"completion_tokens":31,"prompt_tokens":212,"total_tokens":243},"timings":{"prompt_n":212,"prompt_ms":48.1,"prompt_per_token_ms":0.23,"prompt_per_second":4407.5,"predicted_n":31,"predicted_ms":402.7,"predicted_per_token_ms":12.99,"predicted_per_second":76.98}}

data: [DONE]

`

// gatewayText is an OpenRouter-style gateway: SSE comments while the
// upstream model is queued and between chunks, then text and usage.
const gatewayText = `: OPENROUTER PROCESSING

: OPENROUTER PROCESSING

data: {"id":"gen-1745933000-aBcDeF","provider":"Together","model":"meta-llama/llama-3.3-70b-instruct","object":"chat.completion.chunk","created":1745933000,"choices":[{"index":0,"delta":{"role":"assistant","content":"Fine"},"finish_reason":null,"native_finish_reason":null,"logprobs":null}]}

: keep-alive

data: {"id":"gen-1745933000-aBcDeF","provider":"Together","model":"meta-llama/llama-3.3-70b-instruct","object":"chat.completion.chunk","created":1745933000,"choices":[{"index":0,"delta":{"role":"assistant","content":", thanks."},"finish_reason":"stop","native_finish_reason":"stop","logprobs":null}]}

data: {"id":"gen-1745933000-aBcDeF","provider":"Together","model":"meta-llama/llama-3.3-70b-instruct","object":"chat.completion.chunk","created":1745933000,"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null,"native_finish_reason":null,"logprobs":null}],"usage":{"prompt_tokens":40,"completion_tokens":4,"total_tokens":44,"cost":0.0000132,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}}

data: [DONE]

`

// gatewayErrorAfterText is OpenRouter's mid-stream error: output began,
// then a chunk with an error object and finish_reason "error".
const gatewayErrorAfterText = `: OPENROUTER PROCESSING

data: {"id":"gen-1745933100-xYz","provider":"Together","model":"meta-llama/llama-3.3-70b-instruct","object":"chat.completion.chunk","created":1745933100,"choices":[{"index":0,"delta":{"role":"assistant","content":"Partial answer"},"finish_reason":null,"native_finish_reason":null,"logprobs":null}]}

: keep-alive

data: {"id":"gen-1745933100-xYz","object":"chat.completion.chunk","created":1745933100,"model":"meta-llama/llama-3.3-70b-instruct","provider":"Together","error":{"code":502,"message":"Provider disconnected"},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error","native_finish_reason":"error"}]}

`

// gatewayErrorFirst is LiteLLM's proxy passing on a rate limit as an
// error event before any output (code as a string).
const gatewayErrorFirst = `: keep-alive

data: {"error": {"message": "litellm.RateLimitError: RateLimitError: OpenAIException - Rate limit reached for requests", "type": "throttling_error", "param": null, "code": "429"}}

`
