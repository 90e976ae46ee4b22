// Package llm is how Tack talks to language models: conversation messages,
// the Provider streaming interface, model resolution, and the helpers that
// keep a history fit to send (Validate, Repair, MergeSameRole).
//
// # Usage
//
// A Resolver turns a model name into a Model for one session; Chain tries
// several in turn. The session streams each request through the Model's
// Provider:
//
//	m, err := llm.Chain(configured, script.NewResolver(dir)).Resolve("script:demo", nil)
//	resp, err := m.Provider.Stream(ctx, &llm.Request{Messages: history}, emit)
//
// Histories are built from UserMessage, AssistantMessage and
// ToolResultMessage. Validate checks the history invariant (docs/architecture.md,
// guarantee 2): each assistant tool call has exactly one result, before
// the next user or assistant message, and no result is orphaned. Repair
// makes any history valid and says what it changed. Provider adapters call
// MergeSameRole for APIs that reject consecutive messages of one role.
// EstimateTokens is the 4-bytes-a-token estimate used when a provider
// reports no usage.
//
// # Concurrency
//
// Messages are shared and immutable once committed; no function of this
// package modifies a Message it is given, and they are safe to call from
// any goroutine. A Provider instance belongs to one session: Stream is
// called by one goroutine at a time and calls emit on that goroutine.
//
// # Testing
//
// Package llm/llmtest collects streams and checks that what a Provider
// streamed agrees with the response it returned. Package llm/script is a
// scripted Provider for demos and tests of the runtime.
package llm
