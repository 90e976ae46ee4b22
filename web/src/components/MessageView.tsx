import { useState } from "preact/hooks";
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
  /** The URLs of a user message's images. */
  images?: string[];
  tools: ToolCall[];
  streaming?: boolean;
  /** The fork index of a committed message (how many messages a fork from it keeps). */
  forkAt?: number;
  onFork?: (index: number) => void;
  /** Set on the prompt of the run in progress: edit and resend it. */
  onResend?: (text: string) => Promise<boolean>;
}

/** One user or assistant message, with its thinking and its tool calls. */
export function MessageView(p: MessageViewProps) {
  let text = p.interrupted ? p.content.slice(0, -INTERRUPTED_MARK.length) : p.content;
  if (p.summary && text.startsWith(SUMMARY_MARK)) text = text.slice(SUMMARY_MARK.length);
  const [editing, setEditing] = useState<string | null>(null);
  const resend = async () => {
    if (editing === null || editing.trim() === "" || !p.onResend) return;
    if (await p.onResend(editing)) setEditing(null);
  };
  const who = p.summary ? "Summary of the earlier conversation" : p.role === "user" ? "You" : p.role === "assistant" ? "Agent" : p.role;
  return (
    <article
      class={`msg msg-${p.role}${p.summary ? " msg-summary" : ""}${p.streaming ? " msg-streaming" : ""}`}
      data-testid="message"
      data-role={p.role}
      aria-label={`${who} message`}
      aria-busy={p.streaming ? "true" : undefined}
    >
      <div class="msg-head">
        <div class="msg-who" aria-hidden="true">{who}</div>
        {p.onResend && editing === null && (
          <button type="button" class="msg-action" data-testid="edit-prompt" aria-label="Edit and resend this prompt" title="Edit and resend: the run in progress is rolled back" onClick={() => setEditing(p.content)}>
            <span aria-hidden="true">✎ edit</span>
          </button>
        )}
        {p.onFork && p.forkAt !== undefined && (
          <button type="button" class="msg-action" data-testid="fork" data-index={p.forkAt} aria-label="Fork from here" title="Fork: a new session with the conversation up to here" onClick={() => p.onFork!(p.forkAt!)}>
            <span aria-hidden="true">fork</span>
          </button>
        )}
      </div>
      {p.thinking && (
        <details class="thinking">
          <summary>Thinking ({p.thinking.length} characters)</summary>
          <div class="thinking-text">{p.thinking}</div>
        </details>
      )}
      {editing !== null && p.onResend ? (
        <form
          class="edit"
          onSubmit={(e) => {
            e.preventDefault();
            void resend();
          }}
        >
          <textarea
            data-testid="edit-input"
            aria-label="Edited prompt"
            rows={2}
            value={editing}
            onInput={(e) => setEditing((e.currentTarget as HTMLTextAreaElement).value)}
            onKeyDown={(e) => {
              if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
                e.preventDefault();
                void resend();
              } else if (e.key === "Escape") {
                e.preventDefault();
                setEditing(null);
              }
            }}
          />
          <button type="submit" class="primary" data-testid="edit-send" aria-label="Resend the edited prompt">
            <span aria-hidden="true">Resend</span>
          </button>
          <button type="button" aria-label="Cancel the edit" onClick={() => setEditing(null)}>
            <span aria-hidden="true">Cancel</span>
          </button>
        </form>
      ) : (
        text && (p.role === "user" && !p.summary ? <div class="user-text">{text}</div> : <Markdown text={text} />)
      )}
      {p.images && p.images.length > 0 && (
        <div class="msg-images">
          {p.images.map((url, i) =>
            // data: URLs are the images the user attached; other URLs are shown as links, never loaded.
            url.startsWith("data:image/") ? (
              <img key={i} class="msg-image" data-testid="message-image" src={url} alt={`Image ${i + 1}`} />
            ) : (
              <a key={i} class="msg-image-link" data-testid="message-image" href={url} rel="noreferrer noopener" target="_blank">
                {url}
              </a>
            ),
          )}
        </div>
      )}
      {p.interrupted && <div class="interrupted" title="This text was cut short by a stop">[interrupted]</div>}
      {p.tools.map((t) => (
        <ToolCard key={t.callId} tool={t} />
      ))}
    </article>
  );
}
