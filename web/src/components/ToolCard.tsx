import type { ToolCall } from "../reducer";
import { SubAgentView } from "./SubAgent";

const STATE_LABEL: Record<ToolCall["state"], string> = {
  running: "running",
  waiting: "waiting for a person",
  ok: "done",
  error: "error",
};

/** Pretty JSON of a tool's arguments. */
export function prettyArgs(args: unknown): string {
  if (args === undefined) return "";
  try {
    return JSON.stringify(args, null, 2);
  } catch {
    return String(args);
  }
}

/** One tool call: name, arguments, live output, result or error, duration. */
export function ToolCard({ tool }: { tool: ToolCall }) {
  const args = prettyArgs(tool.args);
  const done = tool.result !== null;
  // A sub-agent's result is shown in its nested block; an error result differs from it.
  const body = done ? (tool.sub && tool.result === tool.sub.result ? "" : tool.result) : tool.output;
  return (
    <div
      class={`tool tool-${tool.state}`}
      data-testid="tool-call"
      data-state={tool.state}
      data-call-id={tool.callId}
      role="group"
      aria-label={`Tool call ${tool.name}: ${STATE_LABEL[tool.state]}`}
    >
      <div class="tool-head">
        <span class="tool-icon" aria-hidden="true">
          {tool.state === "running" ? <span class="spinner" /> : tool.state === "waiting" ? "…" : tool.state === "ok" ? "✓" : "✕"}
        </span>
        <span class="tool-name">{tool.name || "tool"}</span>
        <span class="tool-state">{STATE_LABEL[tool.state]}</span>
        {tool.durationMs !== null && <span class="tool-duration">{formatDuration(tool.durationMs)}</span>}
      </div>
      {args && args !== "{}" && (
        <details class="tool-args">
          <summary>arguments</summary>
          <pre>{args}</pre>
        </details>
      )}
      {tool.sub && <SubAgentView sub={tool.sub} done={done} />}
      {body ? <pre class={done && tool.state === "error" ? "tool-out tool-err" : "tool-out"}>{body}</pre> : null}
    </div>
  );
}

/** A duration in ms as "850 ms" or "2.5 s". */
export function formatDuration(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}
