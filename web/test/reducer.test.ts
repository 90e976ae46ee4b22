import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { initialState, reduce, type Action, type ToolCall, type ViewState } from "../src/reducer";
import type { TackEvent, WireState } from "../src/wire";

type Ev = Omit<TackEvent, "seq" | "session"> & { seq?: number };

/** Numbers events from `from` (as a session does) and applies them. */
function run(events: Ev[], s: ViewState = initialState("s1"), from = s.lastSeq + 1): ViewState {
  let seq = from;
  for (const e of events) {
    const ev = { session: "s1", ...e, seq: e.seq ?? seq } as TackEvent;
    if (e.seq === undefined) seq++;
    s = reduce(s, { type: "event", event: ev });
  }
  return s;
}

function apply(s: ViewState, ...actions: Action[]): ViewState {
  return actions.reduce(reduce, s);
}

const idleState: WireState = {
  state: "idle",
  model: "script:demo",
  run_id: null,
  prompt_queue: [],
  steering_queue: [],
  pending_approvals: [],
  pending_question: null,
  running_tools: [],
  message_count: 0,
  usage: { total_tokens: 0 },
  context: { used: 0, window: 8000, percent: 0 },
};

const tool = (t: Partial<ToolCall> & { callId: string; name: string }): ToolCall => ({
  args: undefined,
  state: "running",
  output: "",
  result: null,
  durationMs: null,
  sub: null,
  ...t,
});

const userMsg = (index: number, content: string, summary = false) => ({ index, role: "user", content, thinking: "", toolCalls: [], interrupted: false, summary });
const asstMsg = (index: number, content: string, toolCalls: string[] = [], thinking = "") => ({
  index,
  role: "assistant",
  content,
  thinking,
  toolCalls,
  interrupted: content.endsWith("\n\n[interrupted]"),
  summary: false,
});

// The start of a run, as tack serve sends it (seq 1–8).
const start: Ev[] = [
  { type: "session_created", model: "script:demo" },
  { type: "prompt_received", text: "hello" },
  { type: "agent_start", run_id: "r-1" },
  { type: "message_committed", index: 0, message: { role: "user", content: "hello" } },
  { type: "state_changed", from: "idle", to: "running" },
  { type: "agent_status", status: "thinking", tool_name: null },
  { type: "turn_start", run_id: "r-1", turn: 1 },
  { type: "request_start", turn: 1, model: "script:demo", message_count: 1 },
];

test("a streaming message grows in place, then commits at its index", () => {
  let s = run(start);
  assert.deepEqual(s.messages, [userMsg(0, "hello")]);
  assert.equal(s.status, "thinking");
  assert.equal(s.state, "running");
  assert.equal(s.streaming, null);

  s = run([
    { type: "state_changed", from: "running", to: "streaming" },
    { type: "message_start", role: "assistant" },
    { type: "thinking_start" },
    { type: "thinking_delta", delta: "The " },
    { type: "thinking_delta", delta: "user." },
    { type: "message_delta", delta: "Let " },
  ], s);
  assert.deepEqual(s.streaming, { text: "Let ", thinking: "The user." });
  s = run([{ type: "message_delta", delta: "me look." }], s);
  assert.deepEqual(s.streaming, { text: "Let me look.", thinking: "The user." });
  assert.equal(s.messages.length, 1);

  s = run([
    { type: "response_complete", message: { role: "assistant", content: "Let me look." }, stop_reason: "end_turn" },
    { type: "message_committed", index: 1, message: { role: "assistant", content: "Let me look.", thinking: "The user." } },
    { type: "token_usage", context_used: 53, context_window: 8000, context_percent: 0.6625, session_total_tokens: 138, model: "script:demo", cost_usd: 0 },
    { type: "turn_end", run_id: "r-1", turn: 1 },
    { type: "state_changed", from: "streaming", to: "idle" },
    { type: "agent_status", status: "idle", tool_name: null },
    { type: "agent_end", run_id: "r-1", reason: "completed" },
  ], s);
  assert.deepEqual(s.messages, [userMsg(0, "hello"), asstMsg(1, "Let me look.", [], "The user.")]);
  assert.equal(s.streaming, null);
  assert.equal(s.status, "idle");
  assert.equal(s.state, "idle");
  assert.equal(s.runId, null);
  assert.equal(s.lastSeq, 22);
  assert.deepEqual(s.usage, { used: 53, window: 8000, percent: 0.6625, sessionTotal: 138 });
  assert.deepEqual(s.notices, []);
});

test("a response with nothing to commit leaves no bubble once its turn ends", () => {
  let s = run([
    ...start,
    { type: "state_changed", from: "running", to: "streaming" },
    { type: "message_start", role: "assistant" },
    { type: "thinking_start" },
    { type: "thinking_delta", delta: "Hmm." },
    { type: "response_complete", message: { role: "assistant", content: "" }, stop_reason: "end_turn" },
    { type: "token_usage", context_used: 10, context_window: 8000, context_percent: 0.125, session_total_tokens: 10, model: "script:demo", cost_usd: 0 },
    { type: "turn_end", run_id: "r-1", turn: 1 },
  ]);
  assert.equal(s.streaming, null);
  assert.deepEqual(s.messages, [userMsg(0, "hello")]);
});

const toolTurn: Ev[] = [
  { type: "state_changed", from: "running", to: "streaming" },
  { type: "message_start", role: "assistant" },
  { type: "message_delta", delta: "Running." },
  { type: "message_committed", index: 1, message: { role: "assistant", content: "Running.", tool_calls: [{ id: "c-1", name: "shell", args: { command: "ls" } }] } },
  { type: "tool_calls", count: 1 },
  { type: "state_changed", from: "streaming", to: "executing_tools" },
  { type: "agent_status", status: "tool_calling", tool_name: "shell" },
  { type: "tool_execution_start", name: "shell", call_id: "c-1", args: { command: "ls" } },
  { type: "tool_execution_update", name: "shell", call_id: "c-1", partial: "README.md\n" },
  { type: "tool_execution_update", name: "shell", call_id: "c-1", partial: "go.mod\n" },
];

test("a tool card goes running → ok, with live output and duration", () => {
  let s = run([...start, ...toolTurn]);
  assert.equal(s.status, "tool_calling");
  assert.equal(s.statusTool, "shell");
  assert.deepEqual(s.messages[1], asstMsg(1, "Running.", ["c-1"]));
  assert.deepEqual(s.tools, {
    "c-1": tool({ callId: "c-1", name: "shell", args: { command: "ls" }, state: "running", output: "README.md\ngo.mod\n" }),
  });
  s = run([
    { type: "tool_execution_end", name: "shell", call_id: "c-1", ok: true, result: "README.md\ngo.mod\n" },
    { type: "tool_execution_metrics", name: "shell", call_id: "c-1", started_at_ms: 1000, ended_at_ms: 1003, duration_ms: 3 },
    { type: "message_committed", index: 2, message: { role: "tool", tool_call_id: "c-1", content: "README.md\ngo.mod\n", is_error: false } },
    { type: "state_changed", from: "executing_tools", to: "running" },
    { type: "agent_status", status: "thinking", tool_name: null },
  ], s);
  assert.deepEqual(s.tools, {
    "c-1": tool({
      callId: "c-1",
      name: "shell",
      args: { command: "ls" },
      state: "ok",
      output: "README.md\ngo.mod\n",
      result: "README.md\ngo.mod\n",
      durationMs: 3,
    }),
  });
  // The tool result is no message of its own.
  assert.equal(s.messages.length, 3);
  assert.equal(s.messages[2], undefined);
  assert.equal(s.status, "thinking");
});

test("a tool card goes running → error on abort; interrupted text is marked", () => {
  let s = run([...start, ...toolTurn]);
  s = run([
    { type: "agent_abort", run_id: "r-1", reason: "user" },
    { type: "tool_killed", name: "shell", call_id: "c-1", reason: "aborted" },
    { type: "tool_execution_end", name: "shell", call_id: "c-1", ok: false, result: "interrupted: aborted by user" },
    { type: "tool_execution_metrics", name: "shell", call_id: "c-1", started_at_ms: 1000, ended_at_ms: 1529, duration_ms: 529 },
    { type: "message_committed", index: 2, message: { role: "tool", tool_call_id: "c-1", content: "interrupted: aborted by user", is_error: true } },
    { type: "state_changed", from: "executing_tools", to: "idle" },
    { type: "agent_status", status: "idle", tool_name: null },
    { type: "agent_end", run_id: "r-1", reason: "aborted" },
  ], s);
  assert.deepEqual(s.tools["c-1"], tool({
    callId: "c-1",
    name: "shell",
    args: { command: "ls" },
    state: "error",
    output: "README.md\ngo.mod\n",
    result: "interrupted: aborted by user",
    durationMs: 529,
  }));
  assert.deepEqual(s.notices.map((n) => [n.at, n.kind, n.text]), [[3, "agent_end", "Stopped"]]);

  // Text cut while streaming: what was rendered stays, marked.
  let t = run([...start, { type: "message_start", role: "assistant" }, { type: "message_delta", delta: "a long te" }]);
  assert.deepEqual(t.streaming, { text: "a long te", thinking: "" });
  t = run([
    { type: "agent_abort", run_id: "r-1", reason: "user" },
    { type: "message_committed", index: 1, message: { role: "assistant", content: "a long te\n\n[interrupted]" } },
    { type: "state_changed", from: "streaming", to: "idle" },
  ], t);
  assert.equal(t.streaming, null);
  assert.deepEqual(t.messages[1], { index: 1, role: "assistant", content: "a long te\n\n[interrupted]", thinking: "", toolCalls: [], interrupted: true, summary: false });
});

test("a replay after a reconnect with duplicate events doubles nothing", () => {
  const head: Ev[] = [...start, { type: "message_start", role: "assistant" }, { type: "message_delta", delta: "Hel" }];
  const s1 = run(head); // seq 1..10
  assert.equal(s1.lastSeq, 10);
  // The reconnected stream replays 7..10 again (a server that ignored Last-Event-ID would), then goes on.
  const replay: Ev[] = [
    { ...head[6], seq: 7 },
    { ...head[7], seq: 8 },
    { ...head[8], seq: 9 },
    { ...head[9], seq: 10 },
    { type: "message_delta", delta: "lo", seq: 11 },
    { type: "message_delta", delta: "lo", seq: 11 },
    { type: "message_committed", index: 1, message: { role: "assistant", content: "Hello" }, seq: 12 },
    { type: "message_committed", index: 1, message: { role: "assistant", content: "Hello" }, seq: 12 },
  ];
  const s2 = run(replay, s1);
  assert.deepEqual(s2.messages, [userMsg(0, "hello"), asstMsg(1, "Hello")]);
  assert.equal(s2.streaming, null);
  assert.equal(s2.lastSeq, 12);

  // The same events in one straight stream give the same view.
  const straight = run([...head, { type: "message_delta", delta: "lo" }, { type: "message_committed", index: 1, message: { role: "assistant", content: "Hello" } }]);
  assert.deepEqual(s2, straight);
});

test("a seed, then since=0 replaying the whole ring, gives the same view as the events alone", () => {
  const events: Ev[] = [
    ...start,
    ...toolTurn,
    { type: "tool_execution_end", name: "shell", call_id: "c-1", ok: true, result: "README.md\ngo.mod\n" },
    { type: "message_committed", index: 2, message: { role: "tool", tool_call_id: "c-1", content: "README.md\ngo.mod\n", is_error: false } },
    { type: "state_changed", from: "executing_tools", to: "running" },
    { type: "agent_status", status: "thinking", tool_name: null },
  ];
  const seedState: WireState = { ...idleState, state: "running", run_id: "r-1", message_count: 3 };
  const seedMsgs = [
    { role: "user", content: "hello" },
    { role: "assistant", content: "Running.", tool_calls: [{ id: "c-1", name: "shell", args: { command: "ls" } }] },
    { role: "tool", tool_call_id: "c-1", content: "README.md\ngo.mod\n", is_error: false },
  ];
  const seeded = apply(initialState("s1"), { type: "seed", state: seedState, messages: seedMsgs });
  assert.deepEqual(seeded.messages, [userMsg(0, "hello"), asstMsg(1, "Running.", ["c-1"]), undefined]);
  assert.equal(seeded.tools["c-1"].state, "ok");
  const replayed = run(events, seeded);
  const alone = run(events);
  assert.deepEqual(replayed.messages, alone.messages);
  assert.deepEqual(replayed.tools, alone.tools);
  assert.deepEqual(replayed.queue, alone.queue);
  assert.equal(replayed.status, "thinking");
});

test("events_lost: the seed stands and later events apply on top", () => {
  const seedState: WireState = {
    ...idleState,
    state: "executing_tools",
    run_id: "r-4",
    prompt_queue: ["then summarise"],
    running_tools: [{ call_id: "c-8", name: "sleep", immune: false }],
    message_count: 9,
    usage: { total_tokens: 1540 },
    context: { used: 900, window: 8000, percent: 11.25 },
  };
  const seedMsgs = [
    { role: "user", content: "one" },
    { role: "assistant", content: "ok" },
    { role: "user", content: "two" },
    { role: "assistant", content: "sleeping", tool_calls: [{ id: "c-8", name: "sleep", args: { ms: 3000 } }] },
  ];
  let s = apply(initialState("s1"), { type: "seed", state: seedState, messages: seedMsgs });
  assert.equal(s.status, "tool_calling");
  assert.equal(s.statusTool, "sleep");
  assert.deepEqual(s.queue, [{ kind: "prompt", text: "then summarise", ref: null }]);
  assert.deepEqual(s.tools["c-8"], tool({ callId: "c-8", name: "sleep", args: { ms: 3000 }, state: "running" }));
  assert.equal(s.usage.sessionTotal, 1540);

  s = run([
    { type: "events_lost", from: 1, to: 1999, seq: 0 },
    // The ring still holds the tail, including things the seed already shows.
    { type: "prompt_queued", text: "then summarise", position: 1, seq: 2000 },
    { type: "tool_execution_end", name: "sleep", call_id: "c-8", ok: true, result: "slept 3000 ms", seq: 2001 },
    { type: "message_committed", index: 4, message: { role: "tool", tool_call_id: "c-8", content: "slept 3000 ms", is_error: false }, seq: 2002 },
    { type: "message_committed", index: 5, message: { role: "user", content: "then summarise" }, seq: 2003 },
    { type: "state_changed", from: "executing_tools", to: "running", seq: 2004 },
    { type: "agent_status", status: "thinking", tool_name: null, seq: 2005 },
  ], s);
  assert.deepEqual(s.messages, [userMsg(0, "one"), asstMsg(1, "ok"), userMsg(2, "two"), asstMsg(3, "sleeping", ["c-8"]), undefined, userMsg(5, "then summarise")]);
  assert.deepEqual(s.queue, []);
  assert.deepEqual(s.tools["c-8"], tool({ callId: "c-8", name: "sleep", args: { ms: 3000 }, state: "ok", result: "slept 3000 ms" }));
  assert.deepEqual(s.notices, []);
  assert.equal(s.anchor, 6);
  assert.equal(s.lastSeq, 2005);
  assert.equal(s.status, "thinking");
});

test("queue: positions in order, removal on commit, steering applied", () => {
  let s = run([...start, ...toolTurn]);
  s = run([
    { type: "prompt_queued", text: "second", position: 1 },
    { type: "steering_received", ref: "st-1", text: "steer me", status: "accepted" },
    { type: "prompt_queued", text: "third", position: 2 },
  ], s);
  assert.deepEqual(s.queue, [
    { kind: "prompt", text: "second", ref: null },
    { kind: "steer", text: "steer me", ref: "st-1" },
    { kind: "prompt", text: "third", ref: null },
  ]);
  s = run([
    { type: "tool_skipped_for_steering", name: "shell", call_id: "c-1" },
    { type: "tool_execution_end", name: "shell", call_id: "c-1", ok: false, result: "skipped: a steering message arrived" },
    { type: "message_committed", index: 2, message: { role: "tool", tool_call_id: "c-1", content: "skipped: a steering message arrived", is_error: true } },
    { type: "message_committed", index: 3, message: { role: "user", content: "steer me" } },
    { type: "steering_applied", refs: ["st-1"], count: 1 },
  ], s);
  assert.deepEqual(s.queue, [
    { kind: "prompt", text: "second", ref: null },
    { kind: "prompt", text: "third", ref: null },
  ]);
  assert.equal(s.tools["c-1"].state, "error");
  s = run([{ type: "message_committed", index: 4, message: { role: "user", content: "second" } }], s);
  assert.deepEqual(s.queue, [{ kind: "prompt", text: "third", ref: null }]);
  s = run([{ type: "prompt_dropped", text: "third" }], s);
  assert.deepEqual(s.queue, []);
  assert.deepEqual(s.messages.map((m) => m?.content), ["hello", "Running.", undefined, "steer me", "second"]);
});

test("queue: a rejected steering message is a notice, not a queue entry", () => {
  const s = run([...start, { type: "steering_received", ref: "st-2", text: "x", status: "rejected_full" }]);
  assert.deepEqual(s.queue, []);
  assert.deepEqual(s.notices.map((n) => [n.kind, n.level, n.text]), [["steering_received", "error", "Steering message not taken (rejected_full)"]]);
});

test("approval: pending (tool waiting) → approved (running) → ok; and → rejected", () => {
  const held: Ev[] = [
    ...start,
    { type: "message_committed", index: 1, message: { role: "assistant", content: "run", tool_calls: [{ id: "c-1", name: "shell", args: { command: "rm -rf x" } }] } },
    { type: "state_changed", from: "running", to: "executing_tools" },
    { type: "agent_status", status: "tool_calling", tool_name: "shell" },
    { type: "tool_execution_start", name: "shell", call_id: "c-1", args: { command: "rm -rf x" } },
    { type: "approval_required", approval_id: "ap-1", tool: "shell", call_id: "c-1", args: { command: "rm -rf x" }, hint: "shell: rm -rf x" },
    { type: "state_changed", from: "executing_tools", to: "idle" },
    { type: "agent_status", status: "idle", tool_name: null },
  ];
  let s = run(held);
  assert.deepEqual(s.approvals, [{ approvalId: "ap-1", tool: "shell", callId: "c-1", args: { command: "rm -rf x" }, hint: "shell: rm -rf x" }]);
  assert.equal(s.tools["c-1"].state, "waiting");
  assert.equal(s.state, "idle");

  const approved = run([
    { type: "approval_resolved", approval_id: "ap-1", status: "approved" },
    { type: "agent_resumed", trigger: "tool_approved" },
    { type: "state_changed", from: "idle", to: "executing_tools" },
  ], s);
  assert.deepEqual(approved.approvals, []);
  assert.equal(approved.tools["c-1"].state, "running");
  const done = run([{ type: "tool_execution_end", name: "shell", call_id: "c-1", ok: true, result: "" }], approved);
  assert.equal(done.tools["c-1"].state, "ok");

  const rejected = run([
    { type: "approval_resolved", approval_id: "ap-1", status: "rejected" },
    { type: "tool_execution_end", name: "shell", call_id: "c-1", ok: false, result: "rejected: too risky" },
  ], s);
  assert.deepEqual(rejected.approvals, []);
  assert.equal(rejected.tools["c-1"].state, "error");
  assert.equal(rejected.tools["c-1"].result, "rejected: too risky");

  // A reload while it is pending: the seed shows it, and the replay keeps one.
  const seeded = apply(initialState("s1"), {
    type: "seed",
    state: { ...idleState, pending_approvals: [{ approval_id: "ap-1", tool: "shell", call_id: "c-1", args: { command: "rm -rf x" }, hint: "shell: rm -rf x" }] },
    messages: [{ role: "user", content: "hello" }, { role: "assistant", content: "run", tool_calls: [{ id: "c-1", name: "shell", args: { command: "rm -rf x" } }] }],
  });
  assert.equal(seeded.tools["c-1"].state, "waiting");
  const replayed = run(held, seeded);
  assert.deepEqual(replayed.approvals, s.approvals);
  assert.deepEqual(replayed.tools, s.tools);
});

test("question: ask_user pending (call waiting) → user_responded", () => {
  let s = run([
    ...start,
    { type: "message_committed", index: 1, message: { role: "assistant", content: "ask", tool_calls: [{ id: "c-3", name: "ask_user", args: { question: "Which?", options: ["a", "b"] } }] } },
    { type: "tool_execution_start", name: "ask_user", call_id: "c-3", args: { question: "Which?", options: ["a", "b"] } },
    { type: "ask_user", ref: "q-1", question: "Which?", options: ["a", "b"] },
    { type: "state_changed", from: "executing_tools", to: "idle" },
    { type: "agent_status", status: "idle", tool_name: null },
  ]);
  assert.deepEqual(s.question, { ref: "q-1", question: "Which?", options: ["a", "b"], callId: "c-3" });
  assert.equal(s.tools["c-3"].state, "waiting");
  s = run([{ type: "user_responded", ref: "q-other", response: "x" }], s);
  assert.notEqual(s.question, null);
  s = run([
    { type: "user_responded", ref: "q-1", response: "b" },
    { type: "tool_execution_end", name: "ask_user", call_id: "c-3", ok: true, result: "b" },
  ], s);
  assert.equal(s.question, null);
  assert.equal(s.tools["c-3"].state, "ok");

  // Free-text question from a seed (a reload).
  const seeded = apply(initialState("s1"), { type: "seed", state: { ...idleState, pending_question: { ref: "q-2", question: "Name?", options: null, call_id: "c-4" } }, messages: [] });
  assert.deepEqual(seeded.question, { ref: "q-2", question: "Name?", options: [], callId: "c-4" });
});

test("sending sets thinking at once; a failed send puts it back", () => {
  let s = apply(initialState("s1"), { type: "seed", state: idleState, messages: [] });
  s = reduce(s, { type: "sending" });
  assert.equal(s.status, "thinking");
  assert.equal(s.optimistic, true);
  const failed = reduce(s, { type: "send_failed", message: "Not sent: busy" });
  assert.equal(failed.status, "idle");
  assert.deepEqual(failed.notices.map((n) => [n.level, n.text]), [["error", "Not sent: busy"]]);
  // The first events take over.
  const on = run(start.slice(1), s, 2);
  assert.equal(on.status, "thinking");
  assert.equal(on.optimistic, false);
  // Sending while busy changes nothing (the prompt is queued).
  const busy = run(start);
  assert.equal(reduce(busy, { type: "sending" }), busy);
});

test("context usage follows token_usage and a model switch", () => {
  let s = apply(initialState("s1"), { type: "seed", state: idleState, messages: [] });
  assert.deepEqual(s.usage, { used: 0, window: 8000, percent: 0, sessionTotal: 0 });
  assert.equal(s.model, "script:demo");
  s = run([
    { type: "token_usage", context_used: 2400, context_window: 8000, context_percent: 30, session_total_tokens: 2500, model: "script:demo", cost_usd: 0 },
    { type: "model_switched", from: "script:demo", to: "local/big" },
    { type: "token_usage", context_used: 2400, context_window: null, context_percent: null, session_total_tokens: 4900, model: "local/big", cost_usd: 0 },
  ], s);
  assert.equal(s.model, "local/big");
  assert.deepEqual(s.usage, { used: 2400, window: null, percent: null, sessionTotal: 4900 });
  assert.deepEqual(s.notices.map((n) => n.text), ["Model switched from script:demo to local/big"]);
});

test("quiet notices for recovery, compaction, retries and errors", () => {
  const s = run([
    { type: "agent_recovered", from_state: "executing_tools", interrupted_calls: ["c-1"], run_id: "r-1", resumed: true },
    { type: "compact_start" },
    { type: "compact_end", removed_count: 12 },
    { type: "retry", attempt: 1, delay_ms: 500, reason: "rate limited" },
    { type: "stream_error", error: "connection reset" },
    { type: "error", code: "model_error", message: "boom" },
    { type: "agent_end", run_id: "r-1", reason: "loop_detected" },
  ]);
  assert.deepEqual(s.notices.map((n) => [n.kind, n.level, n.text]), [
    ["agent_recovered", "info", "Recovered after a restart (was executing_tools; 1 interrupted call; resumed)"],
    ["compact_start", "info", "Compacting the history…"],
    ["compact_end", "info", "History compacted (12 messages replaced by a summary)"],
    ["retry", "info", "Retrying (attempt 1, in 500 ms): rate limited"],
    ["stream_error", "error", "Stream error: connection reset"],
    ["error", "error", "Error (model_error): boom"],
    ["agent_end", "info", "Run ended: loop_detected"],
  ]);
});

test("open resets everything", () => {
  const s = run(start);
  assert.deepEqual(reduce(s, { type: "open", session: "s2" }), initialState("s2"));
});

test("a reload after a queued prompt was answered: the seed, then the whole ring, leave no queue entry", () => {
  const events: Ev[] = [
    ...start,
    ...toolTurn,
    { type: "prompt_queued", text: "queued one", position: 1 },
    { type: "prompt_queued", text: "queued one", position: 2 }, // sent twice
    { type: "tool_execution_end", name: "shell", call_id: "c-1", ok: false, result: "interrupted: aborted by user" },
    { type: "message_committed", index: 2, message: { role: "tool", tool_call_id: "c-1", content: "interrupted: aborted by user", is_error: true } },
    { type: "state_changed", from: "executing_tools", to: "idle" },
    { type: "agent_end", run_id: "r-1", reason: "aborted" },
    { type: "message_committed", index: 3, message: { role: "user", content: "queued one" } },
    { type: "state_changed", from: "idle", to: "running" },
  ];
  const alone = run(events);
  assert.deepEqual(alone.queue, [{ kind: "prompt", text: "queued one", ref: null }]);
  const seeded = apply(initialState("s1"), {
    type: "seed",
    state: { ...idleState, state: "running", prompt_queue: ["queued one"] },
    messages: [
      { role: "user", content: "hello" },
      { role: "assistant", content: "Running.", tool_calls: [{ id: "c-1", name: "shell", args: { command: "ls" } }] },
      { role: "tool", tool_call_id: "c-1", content: "interrupted: aborted by user", is_error: true },
      { role: "user", content: "queued one" },
    ],
  });
  const replayed = run(events, seeded);
  assert.deepEqual(replayed.queue, alone.queue);
  assert.deepEqual(replayed.messages, alone.messages);
  assert.deepEqual(replayed.tools, alone.tools);
});

test("a compaction's seed replaces the history: the summary first, nothing of the old indexes left", () => {
  let s = apply(initialState("s1"), {
    type: "seed",
    state: { ...idleState, message_count: 4 },
    messages: [
      { role: "user", content: "p1" },
      { role: "assistant", content: "a1" },
      { role: "user", content: "p2" },
      { role: "assistant", content: "a2" },
    ],
  });
  s = run([{ type: "compact_start" }, { type: "compact_end", removed_count: 2 }], s);
  s = apply(s, {
    type: "seed",
    replace: true,
    state: { ...idleState, message_count: 3 },
    messages: [
      { role: "user", content: "[Summary of the earlier conversation]\np1 was answered.", summary: true },
      { role: "user", content: "p2" },
      { role: "assistant", content: "a2" },
    ],
  });
  assert.deepEqual(s.messages, [
    userMsg(0, "[Summary of the earlier conversation]\np1 was answered.", true),
    userMsg(1, "p2"),
    asstMsg(2, "a2"),
  ]);
  // Without replace a seed lays itself over what a replay already showed.
  const over = apply(s, { type: "seed", state: idleState, messages: [{ role: "user", content: "[Summary of the earlier conversation]\np1 was answered.", summary: true }] });
  assert.equal(over.messages.length, 3);
});

test("todos: seeded from get_state, replaced whole by todo_change", () => {
  let s = apply(initialState("s1"), { type: "seed", state: { ...idleState, todos: [{ text: "read", status: "done" }] }, messages: [] });
  assert.deepEqual(s.todos, [{ text: "read", status: "done" }]);
  s = run([{ type: "todo_change", todos: [{ text: "write", status: "in_progress" }, { text: "ship", status: "pending" }] }], s);
  assert.deepEqual(s.todos, [
    { text: "write", status: "in_progress" },
    { text: "ship", status: "pending" },
  ]);
  s = run([{ type: "todo_change", todos: [] }], s);
  assert.deepEqual(s.todos, []);
  // A seed without todos (an older server) keeps what the events said.
  s = run([{ type: "todo_change", todos: [{ text: "x", status: "pending" }] }], s);
  s = apply(s, { type: "seed", state: idleState, messages: [] });
  assert.deepEqual(s.todos, [{ text: "x", status: "pending" }]);
});

// A rollback, as `tack rpc` sent it: "capitol of France?" runs a long sleep,
// then "capital of France?" comes with if_busy "rollback". The aborted
// run's messages leave the working history, and the new run's commits
// reuse their indexes (0 and 1).
const rollbackRun: Ev[] = [
  { type: "session_created", model: "script:inline" },
  { type: "prompt_received", text: "capitol of France?" },
  { type: "agent_start", run_id: "r-1" },
  { type: "message_committed", index: 0, message: { role: "user", content: "capitol of France?" } },
  { type: "state_changed", from: "idle", to: "running" },
  { type: "agent_status", status: "thinking", tool_name: null },
  { type: "turn_start", run_id: "r-1", turn: 1 },
  { type: "request_start", turn: 1, model: "script:inline", message_count: 1 },
  { type: "state_changed", from: "running", to: "streaming" },
  { type: "message_start", role: "assistant" },
  { type: "message_delta", delta: "Sleeping." },
  { type: "response_complete", message: { role: "assistant", content: "Sleeping.", tool_calls: [{ id: "c-1", name: "sleep", args: { ms: 60000 } }] }, stop_reason: "tool_calls" },
  { type: "message_committed", index: 1, message: { role: "assistant", content: "Sleeping.", tool_calls: [{ id: "c-1", name: "sleep", args: { ms: 60000 } }] } },
  { type: "token_usage", context_used: 5, context_window: null, context_percent: null, session_total_tokens: 11, model: "script:inline", cost_usd: 0 },
  { type: "tool_calls", count: 1 },
  { type: "state_changed", from: "streaming", to: "executing_tools" },
  { type: "agent_status", status: "tool_calling", tool_name: "sleep" },
  { type: "tool_execution_start", name: "sleep", call_id: "c-1", args: { ms: 60000 } },
  { type: "agent_abort", run_id: "r-1", reason: "user" },
  { type: "tool_killed", name: "sleep", call_id: "c-1", reason: "aborted" },
  { type: "tool_execution_end", name: "sleep", call_id: "c-1", ok: false, result: "interrupted: aborted by user" },
  { type: "tool_execution_metrics", name: "sleep", call_id: "c-1", started_at_ms: 1000, ended_at_ms: 1472, duration_ms: 472 },
  { type: "message_committed", index: 2, message: { role: "tool", tool_call_id: "c-1", content: "interrupted: aborted by user", is_error: true } },
  { type: "turn_end", run_id: "r-1", turn: 1 },
  { type: "state_changed", from: "executing_tools", to: "idle" },
  { type: "agent_status", status: "idle", tool_name: null },
  { type: "agent_end", run_id: "r-1", reason: "aborted" },
  // seq 28: the new prompt's run
  { type: "prompt_received", text: "capital of France?" },
  { type: "agent_start", run_id: "r-2" },
  { type: "message_committed", index: 0, message: { role: "user", content: "capital of France?" } },
  { type: "state_changed", from: "idle", to: "running" },
  { type: "agent_status", status: "thinking", tool_name: null },
  { type: "turn_start", run_id: "r-2", turn: 1 },
  { type: "request_start", turn: 1, model: "script:inline", message_count: 1 },
  { type: "state_changed", from: "running", to: "streaming" },
  { type: "message_start", role: "assistant" },
  { type: "message_delta", delta: "Paris." },
  { type: "response_complete", message: { role: "assistant", content: "Paris." }, stop_reason: "end_turn" },
  { type: "message_committed", index: 1, message: { role: "assistant", content: "Paris." } },
  { type: "token_usage", context_used: 5, context_window: null, context_percent: null, session_total_tokens: 18, model: "script:inline", cost_usd: 0 },
  { type: "turn_end", run_id: "r-2", turn: 1 },
  { type: "state_changed", from: "streaming", to: "idle" },
  { type: "agent_status", status: "idle", tool_name: null },
  { type: "agent_end", run_id: "r-2", reason: "completed" },
];

test("rollback: a commit at index i leaves exactly i+1 messages; the rolled-back call and its notices go", () => {
  // Up to the aborted run's end: the typo, its answer, the killed call.
  let s = run(rollbackRun.slice(0, 27));
  assert.deepEqual(s.messages, [userMsg(0, "capitol of France?"), asstMsg(1, "Sleeping.", ["c-1"]), undefined]);
  assert.deepEqual(Object.keys(s.tools), ["c-1"]);
  assert.equal(s.tools["c-1"].state, "error");
  assert.deepEqual(s.notices, [{ id: 1, at: 3, kind: "agent_end", level: "info", text: "Stopped" }]);

  // The new prompt's commit at 0: the rolled-back messages and their call go;
  // the "Stopped" notice moves before the new prompt.
  s = run(rollbackRun.slice(27, 30), s, 28);
  assert.deepEqual(s.messages, [userMsg(0, "capital of France?")]);
  assert.deepEqual(s.tools, {});
  assert.deepEqual(s.notices, [{ id: 1, at: 0, kind: "agent_end", level: "info", text: "Stopped" }]);
  assert.equal(s.anchor, 1);

  s = run(rollbackRun.slice(30), s, 31);
  assert.deepEqual(s.messages, [userMsg(0, "capital of France?"), asstMsg(1, "Paris.")]);
  assert.deepEqual(s.tools, {});
  assert.equal(s.lastSeq, 44);
  assert.equal(s.status, "idle");
  assert.equal(s.anchor, 2);
});

test("rollback: a seed taken after it, then the whole ring replayed, ends as the events alone", () => {
  const alone = run(rollbackRun);
  const seeded = apply(initialState("s1"), {
    type: "seed",
    state: { ...idleState, model: "script:inline", message_count: 2 },
    messages: [
      { role: "user", content: "capital of France?" },
      { role: "assistant", content: "Paris." },
    ],
  });
  const replayed = run(rollbackRun, seeded, 1);
  assert.deepEqual(replayed.messages, alone.messages);
  assert.deepEqual(replayed.tools, alone.tools);
  assert.deepEqual(replayed.notices, alone.notices);
  assert.equal(replayed.lastSeq, 44);
});

test("a compaction's seed takes the replaced messages' calls with it and moves their notices after the history", () => {
  let s = run([...start, ...toolTurn, { type: "tool_execution_end", name: "shell", call_id: "c-1", ok: true, result: "x" }]);
  s = reduce(s, { type: "notice", text: "local note" });
  assert.equal(s.notices[0].at, 2);
  s = apply(s, {
    type: "seed",
    replace: true,
    state: { ...idleState, message_count: 1 },
    messages: [{ role: "user", content: "[Summary of the earlier conversation]\nls was run.", summary: true }],
  });
  assert.deepEqual(s.tools, {});
  assert.equal(s.anchor, 1);
  assert.deepEqual(s.notices.map((n) => n.at), [1]);
});

/** The events of a real subagent run (`tack rpc`, docs/context.md's example with a child that calls echo). */
function subagentRun(): Ev[] {
  // npm test runs in web/.
  const text = readFileSync(join(process.cwd(), "test", "subagent-run.jsonl"), "utf8");
  return text.trim().split("\n").map((l) => JSON.parse(l) as Ev);
}

test("sub-agent: the subagent card holds the child's session, description, text, tools and result", () => {
  const events = subagentRun();
  const upTo = (seq: number) => run(events.filter((e) => (e.seq ?? 0) <= seq));

  // subagent_start: the running subagent call gets its child.
  let s = upTo(18);
  let sub = s.tools["c-1"].sub!;
  assert.equal(sub.child, "p/sub-1");
  assert.equal(sub.description, "count files");
  assert.equal(sub.result, null);
  assert.equal(sub.view.session, "p/sub-1");

  // The child streams its first answer.
  s = upTo(29);
  sub = s.tools["c-1"].sub!;
  assert.deepEqual(sub.view.streaming, { text: "Counting.", thinking: "" });
  assert.equal(sub.view.status, "thinking");

  // The child's echo call runs: its card is the child's, not the parent's.
  s = upTo(36);
  sub = s.tools["c-1"].sub!;
  assert.deepEqual(sub.view.messages, [userMsg(0, "Count the files."), asstMsg(1, "Counting.", ["c-1"])]);
  assert.deepEqual(sub.view.tools, { "c-1": tool({ callId: "c-1", name: "echo", args: { text: "42" } }) });
  assert.equal(sub.view.status, "tool_calling");
  assert.deepEqual(Object.keys(s.tools), ["c-1"]);
  assert.equal(s.tools["c-1"].name, "subagent");
  assert.equal(s.tools["c-1"].state, "running");

  // The end: the child's whole run, then subagent_end and the call's result.
  s = run(events);
  const call = s.tools["c-1"];
  sub = call.sub!;
  assert.equal(sub.result, "There are 42 files.");
  assert.equal(call.state, "ok");
  assert.equal(call.result, "There are 42 files.");
  assert.deepEqual(sub.view.messages, [
    userMsg(0, "Count the files."),
    asstMsg(1, "Counting.", ["c-1"]),
    undefined,
    asstMsg(3, "There are 42 files."),
  ]);
  assert.deepEqual(sub.view.tools, {
    "c-1": tool({ callId: "c-1", name: "echo", args: { text: "42" }, state: "ok", result: "42", durationMs: 0 }),
  });
  assert.equal(sub.view.status, "idle");
  assert.equal(sub.view.state, "idle");
  assert.equal(sub.view.lastSeq, 36);
  // The parent's own view is untouched by the child's events.
  assert.deepEqual(s.messages, [userMsg(0, "How many files?"), asstMsg(1, "", ["c-1"]), undefined, asstMsg(3, "The sub-agent says 42.")]);
  assert.equal(s.lastSeq, 73);
  assert.deepEqual(s.notices, []);
});

test("sub-agent: two calls whose starts came in the other order end on the right cards; a grandchild nests", () => {
  const call = (id: string, desc: string): Ev => ({ type: "tool_execution_start", name: "subagent", call_id: id, args: { task: "t", description: desc } });
  const wrap = (id: string, child: string, event: Record<string, unknown>): Ev => ({ type: "sub_agent_event", call_id: id, child_session: child, event });
  const s = run([
    call("c-1", "one"),
    call("c-2", "two"),
    // The second call's child starts first.
    { type: "subagent_start", child_session: "p/sub-2", description: "two" },
    wrap("c-2", "p/sub-2", { type: "session_created", seq: 1, model: "m" }),
    { type: "subagent_start", child_session: "p/sub-1", description: "one" },
    wrap("c-1", "p/sub-1", { type: "session_created", seq: 1, model: "m" }),
    wrap("c-2", "p/sub-2", { type: "message_delta", seq: 2, delta: "from two" }),
    // A grandchild of the first: wrapped twice.
    wrap("c-1", "p/sub-1", { type: "tool_execution_start", seq: 2, name: "subagent", call_id: "c-9", args: { task: "deeper" } }),
    wrap("c-1", "p/sub-1", { type: "subagent_start", seq: 3, child_session: "p/sub-1/sub-1", description: "deeper" }),
    wrap("c-1", "p/sub-1", {
      type: "sub_agent_event",
      seq: 4,
      call_id: "c-9",
      child_session: "p/sub-1/sub-1",
      event: { type: "message_delta", seq: 1, delta: "from below" },
    }),
    { type: "subagent_end", child_session: "p/sub-2", result: "two done" },
  ]);
  assert.equal(s.tools["c-1"].sub!.child, "p/sub-1");
  assert.equal(s.tools["c-1"].sub!.description, "one");
  assert.equal(s.tools["c-1"].sub!.result, null);
  assert.equal(s.tools["c-2"].sub!.child, "p/sub-2");
  assert.equal(s.tools["c-2"].sub!.description, "two");
  assert.equal(s.tools["c-2"].sub!.result, "two done");
  assert.deepEqual(s.tools["c-2"].sub!.view.streaming, { text: "from two", thinking: "" });
  const grand = s.tools["c-1"].sub!.view.tools["c-9"].sub!;
  assert.equal(grand.child, "p/sub-1/sub-1");
  assert.equal(grand.description, "deeper");
  assert.deepEqual(grand.view.streaming, { text: "from below", thinking: "" });
});

test("status_update shows during the run and clears at agent_end; title_generated names the session at once", () => {
  let s = run(start);
  s = run([
    { type: "message_start", role: "assistant" },
    { type: "title_generated", title: "Release plan" },
    { type: "message_delta", delta: "On it." },
    { type: "status_update", text: "Writing the plan" },
  ], s);
  assert.equal(s.title, "Release plan");
  assert.equal(s.statusText, "Writing the plan");
  assert.deepEqual(s.streaming, { text: "On it.", thinking: "" });
  s = run([{ type: "status_update", text: "Tagging" }], s);
  assert.equal(s.statusText, "Tagging");
  s = run([{ type: "agent_end", run_id: "r-1", reason: "completed" }], s);
  assert.equal(s.statusText, null);
  assert.equal(s.title, "Release plan");
});

test("a user message keeps the URLs of its images; one without has none", () => {
  let s = initialState("s");
  s = reduce(s, {
    type: "seed",
    state: { state: "idle", model: "m", message_count: 2 } as never,
    messages: [
      { role: "user", content: "look", images: [{ url: "data:image/png;base64,AA==", detail: "low" }, { url: "https://x/a.png" }] },
      { role: "assistant", content: "a cat" },
    ],
  });
  assert.deepEqual(s.messages[0]?.images, ["data:image/png;base64,AA==", "https://x/a.png"]);
  assert.equal(s.messages[1]?.images, undefined);
});
