// Runs the unmodified @ag-ui/client HttpAgent against Tack's AG-UI
// endpoint. The Go test TestAGUIClient starts the server, makes the
// sessions named below and sets AGUI_BASE_URL.
import { test } from "node:test";
import assert from "node:assert/strict";
import { HttpAgent } from "@ag-ui/client";

const base = process.env.AGUI_BASE_URL;
if (!base) throw new Error("AGUI_BASE_URL is not set: run this through go test (TestAGUIClient)");

// agent is an HttpAgent on session id, with the user message text.
function agent(id, text) {
  const a = new HttpAgent({ url: `${base}/v1/sessions/${id}/agui`, threadId: id });
  a.addMessage({ id: `${id}-u1`, role: "user", content: text });
  return a;
}

// run runs the agent and records every event it received: CUSTOM ones
// as "CUSTOM:<name>".
async function run(a, params, extra = {}) {
  const seen = [];
  const result = await a.runAgent(params, {
    onEvent: ({ event }) => {
      seen.push(event.type === "CUSTOM" ? `CUSTOM:${event.name}` : event.type);
    },
    ...extra,
  });
  return { result, seen, protocol: seen.filter((t) => !t.startsWith("CUSTOM:")) };
}

// shape keeps what a message says, without the ids the server chose.
function shape(m) {
  const out = { role: m.role };
  if (m.content !== undefined && m.content !== "") out.content = m.content;
  if (m.toolCalls) out.toolCalls = m.toolCalls.map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments }));
  if (m.toolCallId) out.toolCallId = m.toolCallId;
  return out;
}

test("text with reasoning", async () => {
  const a = agent("text", "hello");
  const { result, seen, protocol } = await run(a);
  assert.deepEqual(protocol, [
    "RUN_STARTED",
    "REASONING_START", "REASONING_MESSAGE_START",
    "REASONING_MESSAGE_CONTENT", "REASONING_MESSAGE_CONTENT", "REASONING_MESSAGE_CONTENT",
    "REASONING_MESSAGE_END", "REASONING_END",
    "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
    "RUN_FINISHED",
  ]);
  assert.equal(seen[1], "CUSTOM:prompt_received");
  assert.equal(seen[2], "CUSTOM:agent_start");
  assert.deepEqual(result.result, { reason: "completed" });
  assert.deepEqual(a.messages.map(shape), [
    { role: "user", content: "hello" },
    { role: "reasoning", content: "Greet back." },
    { role: "assistant", content: "Hello from Tack" },
  ]);
});

test("tool call and result", async () => {
  const a = agent("tools", "echo hi");
  const { protocol } = await run(a);
  assert.deepEqual(protocol, [
    "RUN_STARTED",
    "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
    "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END",
    "TOOL_CALL_RESULT",
    "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
    "RUN_FINISHED",
  ]);
  assert.deepEqual(a.messages.map(shape), [
    { role: "user", content: "echo hi" },
    { role: "assistant", content: "Let me echo.", toolCalls: [{ id: "c-1", name: "echo", arguments: '{"text":"hi"}' }] },
    { role: "tool", content: "hi", toolCallId: "c-1" },
    { role: "assistant", content: "Echoed." },
  ]);
});

test("approval interrupt, then resume with approve", async () => {
  const a = agent("approval", "echo secret");
  const first = await run(a);
  assert.deepEqual(first.protocol, ["RUN_STARTED", "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "RUN_FINISHED"]);
  assert.equal(a.pendingInterrupts.length, 1);
  const [intr] = a.pendingInterrupts;
  assert.equal(intr.id, "ap-1");
  assert.equal(intr.reason, "tool_approval");
  assert.equal(intr.toolCallId, "c-1");
  assert.deepEqual(intr.metadata, { tool: "echo", call_id: "c-1", args: { text: "secret" }, hint: 'echo: {"text":"secret"}' });

  // A run that does not answer the interrupt is refused by the client itself.
  await assert.rejects(a.runAgent(), /pending interrupt/);

  const second = await run(a, { resume: [{ interruptId: "ap-1", status: "resolved", payload: { approved: true } }] });
  assert.deepEqual(second.protocol, [
    "RUN_STARTED", "TOOL_CALL_RESULT", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "RUN_FINISHED",
  ]);
  assert.equal(second.seen[1], "CUSTOM:approval_resolved");
  assert.deepEqual(a.pendingInterrupts, []);
  assert.deepEqual(a.messages.map(shape), [
    { role: "user", content: "echo secret" },
    { role: "assistant", toolCalls: [{ id: "c-1", name: "echo", arguments: '{"text":"secret"}' }] },
    { role: "tool", content: "secret", toolCallId: "c-1" },
    { role: "assistant", content: "Approved and done." },
  ]);
});

test("question interrupt, then resume with the answer", async () => {
  const a = agent("question", "deploy");
  await run(a);
  assert.equal(a.pendingInterrupts.length, 1);
  const [intr] = a.pendingInterrupts;
  assert.equal(intr.id, "q-1");
  assert.equal(intr.reason, "question");
  assert.equal(intr.message, "Where to?");
  assert.deepEqual(intr.metadata, { question: "Where to?", options: ["staging", "production"] });

  const second = await run(a, { resume: [{ interruptId: "q-1", status: "resolved", payload: { response: "staging" } }] });
  assert.equal(second.seen[1], "CUSTOM:user_responded");
  assert.deepEqual(a.messages.map(shape).slice(2), [
    { role: "tool", content: "staging", toolCallId: "c-1" },
    { role: "assistant", content: "Deploying to staging." },
  ]);
});

test("model error ends the run with RUN_ERROR", async () => {
  const a = agent("error", "hi");
  let runError;
  const { protocol } = await run(a, undefined, { onRunErrorEvent: ({ event }) => { runError = event; } });
  assert.deepEqual(protocol, ["RUN_STARTED", "RUN_ERROR"]);
  assert.equal(runError.code, "model_error");
  assert.equal(runError.message, "HTTP 500: upstream down");
});

test("abortRun stops the run on the server", async () => {
  const a = agent("abort", "sleep");
  let calls = 0;
  await run(a, undefined, {
    onToolCallEndEvent: () => {
      calls++;
      a.abortRun();
    },
  }).catch(() => {});
  assert.equal(calls, 1);
  // The Go side checks that the session aborted the run and kept its history.
});
