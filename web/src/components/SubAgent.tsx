import type { ComponentChildren } from "preact";
import type { SubAgent, ToolCall } from "../reducer";

const MARK: Record<ToolCall["state"], string> = { running: "…", waiting: "?", ok: "✓", error: "✕" };

/**
 * The child session of a subagent call, nested in the call's card: its id
 * and description, its text as it streams, its tool calls (name and state;
 * a grandchild nests the same way) and its result. Open while the child
 * works, folded once the call is done.
 */
export function SubAgentView({ sub, done }: { sub: SubAgent; done: boolean }) {
  const v = sub.view;
  const steps: ComponentChildren[] = [];
  let calls = 0;
  v.messages.forEach((m, i) => {
    if (!m || m.role !== "assistant") return;
    if (m.content) steps.push(<li key={`m${i}`} class="sub-text">{m.content}</li>);
    for (const id of m.toolCalls) {
      const t = v.tools[id];
      if (!t) continue;
      calls++;
      steps.push(
        <li key={`t${id}`} class={`sub-tool sub-tool-${t.state}`} data-testid="subagent-tool" data-name={t.name} data-state={t.state}>
          <span aria-hidden="true">{MARK[t.state]}</span> <code>{t.name}</code> <span class="sub-state">{t.state}</span>
          {t.sub && <SubAgentView sub={t.sub} done={t.result !== null} />}
        </li>,
      );
    }
  });
  if (v.streaming?.text) steps.push(<li key="streaming" class="sub-text sub-streaming">{v.streaming.text}</li>);
  const working = !done && v.status !== "idle" ? (v.status === "tool_calling" ? `calling ${v.statusTool ?? "a tool"}…` : "thinking…") : "";
  return (
    <details class="subagent" data-testid="subagent" data-child={sub.child} data-state={done ? "done" : "running"} open={!done}>
      <summary>
        <span class="sub-label">sub-agent</span> <code class="sub-id">{sub.child}</code>
        {sub.description && <span class="sub-desc"> {sub.description}</span>}
        <span class="sub-meta">
          {" "}
          · {calls} tool call{calls === 1 ? "" : "s"}
          {working && ` · ${working}`}
        </span>
      </summary>
      {steps.length > 0 && <ol class="sub-steps">{steps}</ol>}
      {sub.result !== null && (
        <div class="sub-result" data-testid="subagent-result">
          {sub.result}
        </div>
      )}
    </details>
  );
}
