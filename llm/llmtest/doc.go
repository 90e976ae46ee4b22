// Package llmtest helps test llm Providers and the code that drives them.
//
// # Usage
//
// Collect streams one request and returns the chunks and the outcome,
// failing the test when the stream breaks the Provider contract:
//
//	chunks, resp, err := llmtest.Collect(t, provider, &llm.Request{Messages: history})
//
// ProviderFunc turns a function into a Provider, for the odd behaviour a
// runtime test needs that the scripted model (llm/script) cannot play,
// such as a provider that ignores cancellation.
//
// # Concurrency
//
// Collect runs Stream on the test's goroutine. A ProviderFunc is as safe
// as the function it wraps.
//
// # Testing
//
// The kit is tested against hand-written providers that keep and that
// break the contract.
package llmtest
