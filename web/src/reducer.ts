// The page's one reducer: (view state, event or local action) → view state.
// It is pure (no I/O, no clock), so that Node tests can drive it with event
// sequences and compare exact view states.

import type { ContextUsage } from "./format";
import type { TackEvent, WireApproval, WireMessage, WireQuestion, WireState, WireTodo } from "./wire";

/** The fixed suffix of assistant text cut by an abort (PROTOCOL §1). */
export const INTERRUPTED_MARK = "\n\n[interrupted]";

/** The agent's activity, as agent_status says it. */
export type AgentStatus = "idle" | "thinking" | "tool_calling";

/** A tool card's state. */
export type ToolState = "running" | "waiting" | "ok" | "error";

/** One committed user or assistant message (tool results live on their tool card). */
export interface Message {
  index: number;
  role: string;
  content: string;
  thinking: string;
  /** The ids of the tool calls the message asked for, in order. */
  toolCalls: string[];
  /** The text was cut by an abort (content keeps the marker). */
  interrupted: boolean;
  /** Compaction's summary of the earlier conversation. */
  summary: boolean;
  /** The images of a user message (their URLs); absent when it has none. */
  images?: string[];
}

/** The assistant message that is streaming, not yet committed. */
export interface Streaming {
  text: string;
  thinking: string;
}

/** One tool call, keyed by call_id. */
export interface ToolCall {
  callId: string;
  name: string;
  args: unknown;
  state: ToolState;
  /** Live output from tool_execution_update, in order. */
  output: string;
  /** The result once the call ended (null before). */
  result: string | null;
  durationMs: number | null;
  /** The child session a `subagent` call runs (null for other tools, and before subagent_start). */
  sub: SubAgent | null;
}

/** The child session of a `subagent` call, as its wrapped events show it. */
export interface SubAgent {
  /** The child's session id (`<parent>/sub-N`). */
  child: string;
  /** subagent_start's description (else the call's `description` argument). */
  description: string;
  /** The child's own view, reduced from the events sub_agent_event wraps. */
  view: ViewState;
  /** subagent_end's result; null while the child works. */
  result: string | null;
}

/** A quiet line in the timeline (recovery, compaction, errors, retries...). */
export interface Notice {
  id: number;
  /** Shown before the message with this index (after all when it is the count). */
  at: number;
  kind: string;
  level: "info" | "error";
  text: string;
}

/** A queued prompt or a steering message waiting to be applied. */
export interface QueueItem {
  kind: "prompt" | "steer";
  text: string;
  /** The steering message's ref (steer only). */
  ref: string | null;
}

/** A pending approval. */
export interface Approval {
  approvalId: string;
  tool: string;
  callId: string;
  args: unknown;
  hint: string | null;
}

/** A pending ask_user question. */
export interface Question {
  ref: string;
  question: string;
  options: string[];
  callId: string | null;
}

/** Everything the page shows about the open session. */
export interface ViewState {
  session: string | null;
  /** The highest event seq applied; events at or below it are ignored. */
  lastSeq: number;
  /** Committed messages by index (holes are possible after events_lost). */
  messages: (Message | undefined)[];
  streaming: Streaming | null;
  tools: Record<string, ToolCall>;
  notices: Notice[];
  nextNoticeId: number;
  /** Where the next notice goes: one past the highest index committed by an event. */
  anchor: number;
  /** The session's state machine state (state_changed). */
  state: string;
  status: AgentStatus;
  statusTool: string | null;
  /** The status was set by the local "sending" action, not by an event. */
  optimistic: boolean;
  model: string;
  title: string | null;
  runId: string | null;
  usage: ContextUsage;
  queue: QueueItem[];
  approvals: Approval[];
  question: Question | null;
  /** The todo list as todo_write last wrote it. */
  todos: WireTodo[];
  /** The model's last status_update in the current run (null when none). */
  statusText: string | null;
}

/** Everything that changes the view state. */
export type Action =
  | { type: "open"; session: string }
  /** The open session was deleted: no session is open. */
  | { type: "close" }
  /**
   * The session's state and working history. With replace (after a
   * compaction) the history is exactly these messages; otherwise they are
   * laid over what is known, since a replay may already have gone further.
   */
  | { type: "seed"; state: WireState; messages: WireMessage[]; replace?: boolean }
  | { type: "event"; event: TackEvent }
  | { type: "sending" }
  | { type: "send_failed"; message: string }
  | { type: "notice"; text: string; level?: "info" | "error" };

/** The state of a page with no session open. */
export function initialState(session: string | null = null): ViewState {
  return {
    session,
    lastSeq: 0,
    messages: [],
    streaming: null,
    tools: {},
    notices: [],
    nextNoticeId: 1,
    anchor: 0,
    state: "idle",
    status: "idle",
    statusTool: null,
    optimistic: false,
    model: "",
    title: null,
    runId: null,
    usage: { used: 0, window: null, percent: 0, sessionTotal: 0 },
    queue: [],
    approvals: [],
    question: null,
    todos: [],
    statusText: null,
  };
}

/** The one reducer. */
export function reduce(s: ViewState, a: Action): ViewState {
  switch (a.type) {
    case "open":
      return initialState(a.session);
    case "close":
      return initialState(null);
    case "seed":
      return seed(s, a.state, a.messages, a.replace === true);
    case "event":
      return applyEvent(s, a.event);
    case "sending":
      if (s.status !== "idle" || s.state !== "idle") return s;
      return { ...s, status: "thinking", statusTool: null, optimistic: true };
    case "send_failed": {
      const t = addNotice(s, "send_failed", "error", a.message);
      if (!t.optimistic) return t;
      return { ...t, status: statusOfState(t.state, t.statusTool), optimistic: false };
    }
    case "notice":
      return addNotice(s, "local", a.level ?? "info", a.text);
  }
}

// ---- seeding from get_state + get_messages ----

function seed(s: ViewState, st: WireState, wire: WireMessage[], replace: boolean): ViewState {
  const messages = replace ? [] : s.messages.slice();
  // A replaced history takes the calls of the messages it no longer has with it.
  const tools = replace ? withoutCallsOf(s.tools, s.messages, wire) : { ...s.tools };
  wire.forEach((m, i) => {
    setAt(messages, i, toMessage(i, m));
    applyMessageToTools(tools, m, "seed");
  });
  const running = new Set((st.running_tools ?? []).map((t) => t.call_id));
  for (const t of st.running_tools ?? []) {
    tools[t.call_id] = { ...(tools[t.call_id] ?? newTool(t.call_id, t.name, undefined)), state: "running" };
  }
  const approvals = (st.pending_approvals ?? []).map(toApproval);
  for (const ap of approvals) {
    tools[ap.callId] = { ...(tools[ap.callId] ?? newTool(ap.callId, ap.tool, ap.args)), state: "waiting" };
  }
  const question = st.pending_question ? toQuestion(st.pending_question, st.pending_question.call_id ?? null) : null;
  if (question?.callId && tools[question.callId]) {
    tools[question.callId] = { ...tools[question.callId], state: "waiting" };
  }
  // A call with no result that is neither running nor held: running while the
  // session works (its result is not committed yet), else it got none.
  for (const id of Object.keys(tools)) {
    const t = tools[id];
    if (t.result !== null || running.has(id) || t.state === "waiting") continue;
    if (t.state === "running" && st.state === "idle") {
      tools[id] = { ...t, state: "error", result: "no result" };
    }
  }
  const queue: QueueItem[] = [
    ...(st.steering_queue ?? []).map((q): QueueItem => ({ kind: "steer", text: q.text, ref: q.ref })),
    ...(st.prompt_queue ?? []).map((text): QueueItem => ({ kind: "prompt", text, ref: null })),
  ];
  const runningNames = (st.running_tools ?? []).map((t) => t.name).join(", ");
  const ctx = st.context ?? {};
  const usage: ContextUsage = {
    used: ctx.used ?? 0,
    window: ctx.window ?? null,
    percent: ctx.percent ?? null,
    sessionTotal: st.usage?.total_tokens ?? 0,
  };
  const status = s.optimistic && st.state === "idle" ? s.status : statusOfState(st.state, runningNames || null);
  return {
    ...s,
    messages,
    tools,
    state: st.state,
    status,
    statusTool: status === "tool_calling" ? runningNames || null : null,
    optimistic: s.optimistic && st.state === "idle",
    model: st.model ?? s.model,
    title: st.title ?? s.title,
    runId: st.run_id ?? null,
    usage,
    queue,
    approvals,
    question,
    todos: st.todos ?? s.todos,
    streaming: st.state === "streaming" || st.state === "running" ? s.streaming : null,
    statusText: st.run_id ? s.statusText : null,
    // Indexes of the old history mean nothing in a replaced one: its
    // notices go after it, where the next ones will go too.
    ...(replace ? { anchor: messages.length, notices: noticesAtMost(s.notices, messages.length) } : {}),
  };
}

function statusOfState(state: string, tool: string | null): AgentStatus {
  if (state === "idle") return "idle";
  if (state === "executing_tools") return tool ? "tool_calling" : "thinking";
  return "thinking";
}

// ---- events ----

function applyEvent(s0: ViewState, e: TackEvent): ViewState {
  if (e.seq > 0 && e.seq <= s0.lastSeq) return s0; // a replayed duplicate
  const s: ViewState = { ...s0, lastSeq: e.seq > 0 ? e.seq : s0.lastSeq };
  switch (e.type) {
    case "session_created":
      return { ...s, model: str(e.model) || s.model };
    case "state_changed": {
      const to = str(e.to);
      return {
        ...s,
        state: to,
        streaming: to === "idle" ? null : s.streaming,
      };
    }
    case "agent_status": {
      const status = (str(e.status) || "idle") as AgentStatus;
      return { ...s, status, statusTool: status === "tool_calling" ? str(e.tool_name) || null : null, optimistic: false };
    }
    case "agent_start":
      return { ...s, runId: str(e.run_id) || null, statusText: null };
    case "agent_end": {
      const reason = str(e.reason);
      const t = { ...s, runId: null, streaming: null, statusText: null };
      if (reason === "completed" || reason === "") return t;
      if (reason === "aborted") return addNotice(t, "agent_end", "info", "Stopped");
      return addNotice(t, "agent_end", reason === "error" ? "error" : "info", `Run ended: ${reason}`);
    }
    case "agent_recovered": {
      const calls = Array.isArray(e.interrupted_calls) ? e.interrupted_calls.length : 0;
      const resumed = e.resumed ? "resumed" : "not resumed";
      return addNotice(s, "agent_recovered", "info",
        `Recovered after a restart (was ${str(e.from_state) || "?"}; ${calls} interrupted call${calls === 1 ? "" : "s"}; ${resumed})`);
    }

    // queue
    case "prompt_queued":
      return { ...s, queue: queuePrompt(s.queue, str(e.text), num(e.position, 0)) };
    case "prompt_dropped":
      return { ...s, queue: removeFirst(s.queue, (q) => q.kind === "prompt" && q.text === str(e.text)) };
    case "prompt_rejected":
      return addNotice(s, "prompt_rejected", "error", `Prompt rejected: ${str(e.reason)}`);
    case "steering_received": {
      const ref = str(e.ref);
      if (str(e.status) !== "accepted") {
        return addNotice(s, "steering_received", "error", `Steering message not taken (${str(e.status)})`);
      }
      if (s.queue.some((q) => q.kind === "steer" && q.ref === ref)) return s;
      return { ...s, queue: [...s.queue, { kind: "steer", text: str(e.text), ref }] };
    }
    case "steering_applied": {
      const refs = new Set(Array.isArray(e.refs) ? e.refs.map(String) : []);
      return { ...s, queue: s.queue.filter((q) => !(q.kind === "steer" && q.ref !== null && refs.has(q.ref))) };
    }
    case "steering_dropped":
      return { ...s, queue: s.queue.filter((q) => !(q.kind === "steer" && q.ref === str(e.ref))) };

    // streaming and commits
    case "message_start":
      if (str(e.role) !== "assistant") return s;
      return { ...s, streaming: { text: "", thinking: "" } };
    case "thinking_start":
      return s.streaming ? s : { ...s, streaming: { text: "", thinking: "" } };
    case "thinking_delta": {
      const st = s.streaming ?? { text: "", thinking: "" };
      return { ...s, streaming: { ...st, thinking: st.thinking + str(e.delta) } };
    }
    case "message_delta": {
      const st = s.streaming ?? { text: "", thinking: "" };
      return { ...s, streaming: { ...st, text: st.text + str(e.delta) } };
    }
    case "message_committed":
      return commit(s, num(e.index, -1), (e.message ?? {}) as WireMessage);
    case "turn_end":
      // The response is over: committed already, or not committed at all
      // (it had neither text nor tool calls), its bubble goes either way.
      return s.streaming ? { ...s, streaming: null } : s;
    case "token_usage":
      return {
        ...s,
        usage: {
          used: num(e.context_used, 0),
          window: typeof e.context_window === "number" ? e.context_window : null,
          percent: typeof e.context_percent === "number" ? e.context_percent : null,
          sessionTotal: num(e.session_total_tokens, s.usage.sessionTotal),
        },
        model: str(e.model) || s.model,
      };

    // tools
    case "tool_execution_start": {
      const id = str(e.call_id);
      const t = s.tools[id] ?? newTool(id, str(e.name), e.args);
      return withTool(s, { ...t, name: str(e.name) || t.name, args: e.args ?? t.args, state: t.result === null ? "running" : t.state });
    }
    case "tool_execution_update": {
      const id = str(e.call_id);
      const t = s.tools[id] ?? newTool(id, str(e.name), undefined);
      const part = typeof e.partial === "string" ? e.partial : JSON.stringify(e.partial);
      return withTool(s, { ...t, output: t.output + part });
    }
    case "tool_execution_end": {
      const id = str(e.call_id);
      const t = s.tools[id] ?? newTool(id, str(e.name), undefined);
      return withTool(s, { ...t, state: e.ok === true ? "ok" : "error", result: resultText(e.result) });
    }
    case "tool_execution_metrics": {
      const id = str(e.call_id);
      const t = s.tools[id] ?? newTool(id, str(e.name), undefined);
      return withTool(s, { ...t, durationMs: num(e.duration_ms, 0) });
    }
    case "tool_blocked":
      return addNotice(s, e.type, "error", `Tool ${str(e.name)} blocked: ${str(e.reason)}`);
    case "tool_call_unknown":
      return addNotice(s, e.type, "error", `The model called an unknown tool: ${str(e.name)}`);
    case "loop_detected":
      return addNotice(s, e.type, "error", `Loop detected: ${str(e.tool)} called ${num(e.count, 0)} times`);
    case "large_result_offloaded":
      return addNotice(s, e.type, "info", `Large result of ${str(e.tool)} saved to ${str(e.path)}`);
    case "tools_updated":
      return addNotice(s, e.type, "info", "Tools updated");

    // people in the loop
    case "approval_required": {
      const ap = toApproval(e as unknown as WireApproval);
      const t = s.tools[ap.callId] ?? newTool(ap.callId, ap.tool, ap.args);
      const approvals = s.approvals.some((x) => x.approvalId === ap.approvalId) ? s.approvals : [...s.approvals, ap];
      return withTool({ ...s, approvals }, { ...t, state: t.result === null ? "waiting" : t.state });
    }
    case "approval_resolved": {
      const id = str(e.approval_id);
      const ap = s.approvals.find((x) => x.approvalId === id);
      const t = { ...s, approvals: s.approvals.filter((x) => x.approvalId !== id) };
      const tool = ap ? t.tools[ap.callId] : undefined;
      if (!tool || tool.state !== "waiting") return t;
      // Approved: it runs now. Otherwise its error result follows at once.
      return str(e.status) === "approved" ? withTool(t, { ...tool, state: "running" }) : t;
    }
    case "tool_approved_always":
      return addNotice(s, e.type, "info", `${str(e.tool)} approved always${e.command_family ? ` for ${str(e.command_family)}` : ""}`);
    case "ask_user": {
      const ref = str(e.ref);
      // The event does not name its call: it is the ask_user call that runs.
      const call = Object.values(s.tools).filter((t) => t.name === "ask_user" && t.state === "running").pop();
      const q = toQuestion(e as unknown as WireQuestion, call?.callId ?? null);
      const t = { ...s, question: q };
      return call && ref ? withTool(t, { ...call, state: "waiting" }) : t;
    }
    case "user_responded": {
      if (!s.question || s.question.ref !== str(e.ref)) return s;
      const call = s.question.callId ? s.tools[s.question.callId] : undefined;
      const t = { ...s, question: null };
      return call && call.state === "waiting" ? withTool(t, { ...call, state: "running" }) : t;
    }

    // quiet notices
    case "model_switched":
      return addNotice({ ...s, model: str(e.to) || s.model }, e.type, "info", `Model switched from ${str(e.from)} to ${str(e.to)}`);
    case "compact_start":
      return addNotice(s, e.type, "info", "Compacting the history…");
    case "compact_end":
      return addNotice(s, e.type, "info", `History compacted (${num(e.removed_count, 0)} messages replaced by a summary)`);
    case "context_overflow":
      return addNotice(s, e.type, "error", `Context overflow: ${str(e.reason)}`);
    case "retry":
      return addNotice(s, e.type, "info", `Retrying (attempt ${num(e.attempt, 0)}, in ${num(e.delay_ms, 0)} ms): ${str(e.reason)}`);
    case "stream_error":
      return addNotice(s, e.type, "error", `Stream error: ${str(e.error)}`);
    case "stream_stalled":
      return addNotice(s, e.type, "info", `The model has sent nothing for ${num(e.elapsed_ms, 0)} ms`);
    case "error":
      return addNotice(s, e.type, "error", `Error (${str(e.code)}): ${str(e.message)}`);
    case "session_forked":
      return addNotice(s, e.type, "info", `Forked from ${str(e.from_session)} at message ${num(e.index, 0)}`);
    case "title_generated":
      return { ...s, title: str(e.title) || s.title };
    case "status_update":
      return { ...s, statusText: str(e.text) || null };

    // sub-agents
    case "subagent_start": {
      // The event names no call: it belongs to a running subagent call
      // without a child yet; the wrapped events that follow name the call
      // and move the child to it should the guess be wrong.
      const child = str(e.child_session);
      if (findSub(s.tools, child)) return s;
      const call = Object.values(s.tools).find((t) => t.name === "subagent" && t.sub === null && t.result === null);
      if (!call) return s;
      return withTool(s, { ...call, sub: newSub(child, str(e.description) || describe(call.args)) });
    }
    case "sub_agent_event": {
      const child = str(e.child_session);
      const inner = e.event as TackEvent | undefined;
      if (!child || !inner || typeof inner !== "object") return s;
      const id = str(e.call_id);
      let t = s;
      let call = t.tools[id] ?? newTool(id, "subagent", undefined);
      let sub = call.sub?.child === child ? call.sub : null;
      if (!sub) {
        const holder = findSub(t.tools, child);
        if (holder && holder.callId !== id) t = withTool(t, { ...holder, sub: null });
        sub = holder?.sub ?? newSub(child, describe(call.args));
        call = t.tools[id] ?? call;
      }
      const view = applyEvent(sub.view, { ...inner, seq: num(inner.seq, 0) });
      return withTool(t, { ...call, sub: { ...sub, view } });
    }
    case "subagent_end": {
      const call = findSub(s.tools, str(e.child_session));
      if (!call?.sub) return s;
      return withTool(s, { ...call, sub: { ...call.sub, result: resultText(e.result) } });
    }
    case "todo_change":
      return { ...s, todos: Array.isArray(e.todos) ? (e.todos as WireTodo[]) : [] };
    case "intervention":
      return addNotice(s, e.type, "info", str(e.text));
    case "events_lost":
      // The ring no longer reaches back: the seed stands (the client fetches
      // a new one when this follows a reconnect). Notices go after it.
      return { ...s, anchor: Math.max(s.anchor, s.messages.length) };
    default:
      return s;
  }
}

/**
 * A commit at index i means the working history now holds exactly i+1
 * messages: after a rollback the next commits reuse the indexes of the
 * messages it took out, so whatever was shown from i on goes, with its
 * tool calls and the notices placed after it. A replay over a seed
 * re-applies the later commits too, so it ends where the seed stands.
 */
function commit(s: ViewState, index: number, m: WireMessage): ViewState {
  if (index < 0) return s;
  const rewrite = index < s.messages.length;
  const messages = s.messages.slice(0, index);
  setAt(messages, index, toMessage(index, m));
  const tools = rewrite ? withoutCallsOf(s.tools, s.messages.slice(index), [m]) : { ...s.tools };
  applyMessageToTools(tools, m, "event");
  // Also when the index is already known (a replay over a seed): the replay
  // then holds the prompt_queued that put the entry there just before.
  const queue = m.role === "user" ? dequeue(s.queue, m.content ?? "") : s.queue;
  return {
    ...s,
    messages,
    tools,
    queue,
    anchor: index + 1,
    notices: rewrite ? noticesAtMost(s.notices, index) : s.notices,
    streaming: m.role === "assistant" ? null : s.streaming,
  };
}

/** The tool calls without those that only the removed messages asked for. */
function withoutCallsOf(tools: Record<string, ToolCall>, removed: (Message | undefined)[], kept: WireMessage[]): Record<string, ToolCall> {
  const keep = new Set(kept.flatMap((m) => (m.tool_calls ?? []).map((c) => c.id)));
  const out = { ...tools };
  for (const m of removed) for (const id of m?.toolCalls ?? []) if (!keep.has(id)) delete out[id];
  return out;
}

/** The notices, those placed past index moved to it. */
function noticesAtMost(notices: Notice[], index: number): Notice[] {
  return notices.some((n) => n.at > index) ? notices.map((n) => (n.at > index ? { ...n, at: index } : n)) : notices;
}

/** Takes the queue entry that a committed user message came from. */
function dequeue(queue: QueueItem[], content: string): QueueItem[] {
  const steer = queue.findIndex((q) => q.kind === "steer" && q.text === content);
  if (steer >= 0) return queue.filter((_, i) => i !== steer);
  const prompt = queue.findIndex((q) => q.kind === "prompt" && q.text === content);
  if (prompt >= 0) return queue.filter((_, i) => i !== prompt);
  // queue_mode "all" joins the queued prompts into one message.
  return queue.filter((q) => !(q.kind === "prompt" && q.text !== "" && content.includes(q.text)));
}

/**
 * Puts a queued prompt at its 1-based position among the queued prompts,
 * unless the same text is already there (a replay over a seed).
 */
function queuePrompt(queue: QueueItem[], text: string, position: number): QueueItem[] {
  const prompts = queue.map((q, i) => ({ q, i })).filter((x) => x.q.kind === "prompt");
  const at = position > 0 ? prompts[position - 1] : undefined;
  if (at && at.q.text === text) return queue;
  const item: QueueItem = { kind: "prompt", text, ref: null };
  if (!at) return [...queue, item];
  return [...queue.slice(0, at.i), item, ...queue.slice(at.i)];
}

/** Sets list[i], filling any gap before it with undefined (never a sparse array). */
function setAt<T>(list: (T | undefined)[], i: number, v: T | undefined): void {
  while (list.length < i) list.push(undefined);
  list[i] = v;
}

function removeFirst<T>(list: T[], pred: (x: T) => boolean): T[] {
  const i = list.findIndex(pred);
  return i < 0 ? list : list.filter((_, j) => j !== i);
}

function toMessage(index: number, m: WireMessage): Message | undefined {
  if (m.role === "tool") return undefined;
  const content = m.content ?? "";
  return {
    index,
    role: m.role,
    content,
    thinking: m.thinking ?? "",
    toolCalls: (m.tool_calls ?? []).map((c) => c.id),
    interrupted: m.role === "assistant" && content.endsWith(INTERRUPTED_MARK),
    summary: m.summary === true,
    ...(m.images?.length ? { images: m.images.map((i) => i.url) } : {}),
  };
}

/**
 * Records what a message says about tool calls: an assistant message names
 * its calls, a tool message carries a call's result.
 */
function applyMessageToTools(tools: Record<string, ToolCall>, m: WireMessage, from: "seed" | "event"): void {
  if (m.role === "assistant") {
    for (const c of m.tool_calls ?? []) {
      const t = tools[c.id];
      tools[c.id] = t ? { ...t, name: c.name, args: c.args ?? t.args } : newTool(c.id, c.name, c.args);
    }
  } else if (m.role === "tool" && m.tool_call_id) {
    const id = m.tool_call_id;
    const t = tools[id] ?? newTool(id, "", undefined);
    const state: ToolState = m.is_error ? "error" : "ok";
    if (from === "event" && t.result !== null && t.state === state) return;
    tools[id] = { ...t, state, result: m.content ?? "" };
  }
}

function newTool(callId: string, name: string, args: unknown): ToolCall {
  return { callId, name, args, state: "running", output: "", result: null, durationMs: null, sub: null };
}

function newSub(child: string, description: string): SubAgent {
  return { child, description, view: initialState(child), result: null };
}

/** The call whose sub-agent is this child session. */
function findSub(tools: Record<string, ToolCall>, child: string): ToolCall | undefined {
  return Object.values(tools).find((t) => t.sub?.child === child);
}

/** The `description` argument of a subagent call, if any. */
function describe(args: unknown): string {
  const d = args && typeof args === "object" ? (args as { description?: unknown }).description : undefined;
  return typeof d === "string" ? d : "";
}

function withTool(s: ViewState, t: ToolCall): ViewState {
  return { ...s, tools: { ...s.tools, [t.callId]: t } };
}

function toApproval(a: WireApproval): Approval {
  return { approvalId: a.approval_id, tool: a.tool, callId: a.call_id, args: a.args, hint: a.hint ?? null };
}

function toQuestion(q: WireQuestion, callId: string | null): Question {
  return { ref: q.ref, question: q.question, options: Array.isArray(q.options) ? q.options.map(String) : [], callId };
}

function addNotice(s: ViewState, kind: string, level: "info" | "error", text: string): ViewState {
  const n: Notice = { id: s.nextNoticeId, at: s.anchor, kind, level, text };
  return { ...s, notices: [...s.notices, n], nextNoticeId: s.nextNoticeId + 1 };
}

function resultText(r: unknown): string {
  if (typeof r === "string") return r;
  if (r === undefined || r === null) return "";
  return JSON.stringify(r, null, 2);
}

function str(v: unknown): string {
  return typeof v === "string" ? v : v === undefined || v === null ? "" : String(v);
}

function num(v: unknown, dflt: number): number {
  return typeof v === "number" && Number.isFinite(v) ? v : dflt;
}
