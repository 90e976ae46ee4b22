import type { ComponentChildren } from "preact";
import { useLayoutEffect, useRef } from "preact/hooks";
import type { Notice, ToolCall, ViewState } from "../reducer";
import { MessageView } from "./MessageView";
import { ToolCard } from "./ToolCard";

/** The status line under the last message (hidden when idle), with the model's own status_update. */
export function AgentStatusLine({ status, tool, note }: { status: ViewState["status"]; tool: string | null; note: string | null }) {
  const text = status === "thinking" ? "thinking…" : status === "tool_calling" ? `calling ${tool ?? "a tool"}…` : "";
  return (
    <div class={`status status-${status}`} data-testid="agent-status" data-status={status} role="status" aria-live="polite">
      {status === "thinking" && <span class="dots" aria-hidden="true"><i /><i /><i /></span>}
      {status === "tool_calling" && <span class="spinner" aria-hidden="true" />}
      {text && <span class="status-text">{text}</span>}
      {note && (
        <span class="status-note" data-testid="status-text">
          {note}
        </span>
      )}
    </div>
  );
}

const TODO_MARK: Record<string, string> = { done: "✓", in_progress: "▸", pending: "○" };

/** The todo list the model keeps with todo_write (hidden while empty). */
export function TodoList({ todos }: { todos: ViewState["todos"] }) {
  if (todos.length === 0) return null;
  return (
    <ul class="todos" data-testid="todos" aria-label="Todo list">
      {todos.map((t, i) => (
        <li key={i} class={`todo todo-${t.status}`} data-status={t.status}>
          <span class="todo-mark" aria-hidden="true">{TODO_MARK[t.status] ?? "○"}</span>
          {t.text}
        </li>
      ))}
    </ul>
  );
}

function NoticeLine({ n }: { n: Notice }) {
  return (
    <div class={`notice notice-${n.level}`} data-testid="notice" data-kind={n.kind} role={n.level === "error" ? "alert" : undefined}>
      {n.text}
    </div>
  );
}

/** What a person can do from a message. */
export interface MessageActions {
  /** Forks the session keeping this many messages of its history. */
  onFork: (index: number) => void;
  /** Sends the last prompt again, edited, rolling back the run in progress. */
  onResend: (text: string) => Promise<boolean>;
}

/** The conversation: messages by index, quiet notices, the streaming message, the status. */
export function Timeline({ v, actions }: { v: ViewState; actions: MessageActions }) {
  const ref = useRef<HTMLDivElement>(null);
  const stick = useRef(true);
  const onScroll = () => {
    const el = ref.current;
    if (el) stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 80;
  };
  useLayoutEffect(() => {
    const el = ref.current;
    if (el && stick.current) el.scrollTop = el.scrollHeight;
  });

  const used = new Set<string>();
  const toolsOf = (ids: string[]): ToolCall[] =>
    ids.map((id) => {
      used.add(id);
      return v.tools[id];
    }).filter((t): t is ToolCall => t !== undefined);

  const items: ComponentChildren[] = [];
  const byAt = new Map<number, Notice[]>();
  for (const n of v.notices) {
    const list = byAt.get(n.at) ?? [];
    list.push(n);
    byAt.set(n.at, list);
  }
  const count = v.messages.length;
  // The prompt the run in progress answers can be edited and sent again.
  const inRun = v.runId !== null || v.state !== "idle";
  let lastUser = -1;
  v.messages.forEach((m, i) => {
    if (m && m.role === "user" && !m.summary) lastUser = i;
  });
  for (let i = 0; i <= count; i++) {
    for (const n of byAt.get(i) ?? []) items.push(<NoticeLine key={`n${n.id}`} n={n} />);
    byAt.delete(i);
    const m = v.messages[i];
    if (m) {
      items.push(
        <MessageView
          key={`m${i}`}
          role={m.role}
          content={m.content}
          thinking={m.thinking}
          interrupted={m.interrupted}
          summary={m.summary}
          images={m.images}
          tools={toolsOf(m.toolCalls)}
          // Keep the message and the results of its calls, which follow it.
          forkAt={i + 1 + m.toolCalls.length}
          onFork={actions.onFork}
          onResend={inRun && i === lastUser ? actions.onResend : undefined}
        />,
      );
    }
  }
  // Tool calls whose message is not known (events were lost): after the history.
  const orphans = Object.values(v.tools).filter((t) => !used.has(t.callId));
  for (const t of orphans) items.push(<ToolCard key={`t${t.callId}`} tool={t} />);
  if (v.streaming) {
    // Keyed as the index it will commit at, so the element grows in place and stays.
    items.push(
      <MessageView key={`m${count}`} role="assistant" content={v.streaming.text} thinking={v.streaming.thinking} interrupted={false} tools={[]} streaming />,
    );
  }
  for (const list of byAt.values()) for (const n of list) items.push(<NoticeLine key={`n${n.id}`} n={n} />);

  return (
    <div class="timeline" ref={ref} onScroll={onScroll} aria-label="Conversation" role="log">
      {items.length === 0 && <div class="empty">No messages yet. Type below to start.</div>}
      {items}
      <TodoList todos={v.todos} />
      <AgentStatusLine status={v.status} tool={v.statusTool} note={v.statusText} />
    </div>
  );
}
