import { INTERRUPTED_MARK, type ToolCall } from "../reducer";
import { Markdown } from "./Markdown";
import { ToolCard } from "./ToolCard";

/** The first line of the summary message compaction writes (docs/context.md). */
const SUMMARY_MARK = "[Summary of the earlier conversation]\n";

/** What a message view shows: a committed message or the streaming one. */
export interface MessageViewProps {
  role: string;
  content: string;
  thinking: string;
  interrupted: boolean;
  summary?: boolean;
  tools: ToolCall[];
  streaming?: boolean;
}

/** One user or assistant message, with its thinking and its tool calls. */
export function MessageView(p: MessageViewProps) {
  let text = p.interrupted ? p.content.slice(0, -INTERRUPTED_MARK.length) : p.content;
  if (p.summary && text.startsWith(SUMMARY_MARK)) text = text.slice(SUMMARY_MARK.length);
  const who = p.summary ? "Summary of the earlier conversation" : p.role === "user" ? "You" : p.role === "assistant" ? "Agent" : p.role;
  return (
    <article
      class={`msg msg-${p.role}${p.summary ? " msg-summary" : ""}${p.streaming ? " msg-streaming" : ""}`}
      data-testid="message"
      data-role={p.role}
      aria-label={`${who} message`}
      aria-busy={p.streaming ? "true" : undefined}
    >
      <div class="msg-who" aria-hidden="true">{who}</div>
      {p.thinking && (
        <details class="thinking">
          <summary>Thinking ({p.thinking.length} characters)</summary>
          <div class="thinking-text">{p.thinking}</div>
        </details>
      )}
      {text && (p.role === "user" && !p.summary ? <div class="user-text">{text}</div> : <Markdown text={text} />)}
      {p.interrupted && <div class="interrupted" title="This text was cut short by a stop">[interrupted]</div>}
      {p.tools.map((t) => (
        <ToolCard key={t.callId} tool={t} />
      ))}
    </article>
  );
}
