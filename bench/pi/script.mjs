// A scripted stream function for pi-agent-core: the same turns, with the
// same meaning, as Tack's scripted model (docs/protocol.md#the-scripted-model). Each call of the
// stream function takes the next turn (the last repeats) and plays it:
// delayMs, then the text in chunkSize-character chunks with chunkDelayMs
// before each but the first, then the tool calls, each whole. Every turn
// reports the same fixed usage as the Go drivers' models.
//
// It speaks pi-ai's AssistantMessageEventStream protocol as pi-ai's
// providers do: start, text_start/delta/end, toolcall_start/end, then done,
// or error with stopReason "aborted" as soon as the AbortSignal fires (a
// listener on the signal, as a provider's aborted fetch rejects at once).
//
// Chunks without a delay go out in bursts of BURST, with a turn of the
// event loop (setImmediate) between bursts, as when a provider parses one
// network read holding several server-sent events. Pushing a whole long
// text at once instead would fill the EventStream's queue, whose shift() is
// then linear: pi would look slower than it is.

import { createAssistantMessageEventStream } from "@mariozechner/pi-ai";

export const MODEL = {
  id: "script",
  name: "script",
  api: "script",
  provider: "script",
  baseUrl: "",
  reasoning: false,
  input: ["text"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 8000,
  maxTokens: 1000,
};

const USAGE = {
  input: 10,
  output: 5,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 15,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};

// scripted returns a stream function playing turns; observe, when given,
// sees each request's context first.
export function scripted(turns, observe) {
  let next = 0;
  let calls = 0;
  return (model, context, options) => {
    observe?.(context);
    const turn = turns[Math.min(next, turns.length - 1)];
    next++;
    const firstCall = calls;
    calls += turn.toolCalls?.length ?? 0;
    const stream = createAssistantMessageEventStream();
    play(stream, model, turn, firstCall, options?.signal);
    return stream;
  };
}

const ABORTED = Symbol("aborted");
const BURST = 16;

// wait resolves after ms, or with ABORTED as soon as signal fires.
function wait(ms, signal) {
  if (signal?.aborted) return Promise.resolve(ABORTED);
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve(ABORTED);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

function split(text, size) {
  if (!text) return [];
  if (!(size > 0)) return [text];
  const chars = Array.from(text);
  const out = [];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(""));
  return out;
}

async function play(stream, model, turn, firstCall, signal) {
  const output = {
    role: "assistant",
    content: [],
    api: model.api,
    provider: model.provider,
    model: model.id,
    usage: USAGE,
    stopReason: "stop",
    timestamp: Date.now(),
  };
  const aborted = () => {
    output.stopReason = "aborted";
    output.errorMessage = "Request was aborted";
    stream.push({ type: "error", reason: "aborted", error: output });
    stream.end(output);
  };
  // pause waits ms before a chunk; without a delay, it yields to the
  // event loop once every BURST chunks.
  let burst = 0;
  const pause = async (ms) => {
    if (ms > 0) return wait(ms, signal);
    if (++burst % BURST === 0) await new Promise(setImmediate);
    return signal?.aborted ? ABORTED : undefined;
  };
  if (signal?.aborted) return aborted();
  if (turn.delayMs > 0 && (await wait(turn.delayMs, signal)) === ABORTED) return aborted();
  stream.push({ type: "start", partial: output });
  const pieces = split(turn.text, turn.chunkSize);
  if (pieces.length > 0) {
    const index = output.content.length;
    const block = { type: "text", text: "" };
    output.content.push(block);
    stream.push({ type: "text_start", contentIndex: index, partial: output });
    for (let i = 0; i < pieces.length; i++) {
      if (i > 0 && (await pause(turn.chunkDelayMs)) === ABORTED) return aborted();
      block.text += pieces[i];
      stream.push({ type: "text_delta", contentIndex: index, delta: pieces[i], partial: output });
    }
    stream.push({ type: "text_end", contentIndex: index, content: block.text, partial: output });
  }
  if (signal?.aborted) return aborted();
  (turn.toolCalls ?? []).forEach((c, i) => {
    const index = output.content.length;
    const toolCall = { type: "toolCall", id: `c-${firstCall + i + 1}`, name: c.name, arguments: c.args };
    output.content.push(toolCall);
    output.stopReason = "toolUse";
    stream.push({ type: "toolcall_start", contentIndex: index, partial: output });
    stream.push({ type: "toolcall_end", contentIndex: index, toolCall, partial: output });
  });
  stream.push({ type: "done", reason: output.stopReason, message: output });
  stream.end(output);
}
