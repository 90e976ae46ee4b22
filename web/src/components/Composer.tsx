import { useRef, useState } from "preact/hooks";
import type { QueueItem } from "../reducer";

/** Queued prompts and steering messages, in order. */
export function QueuePanel({ queue }: { queue: QueueItem[] }) {
  let pos = 0;
  return (
    <ol class={`queue${queue.length ? "" : " queue-empty"}`} data-testid="queue" aria-label="Queued messages">
      {queue.map((q, i) => {
        if (q.kind === "prompt") pos++;
        return (
          <li key={`${i}-${q.ref ?? q.text}`} class={`queue-item queue-${q.kind}`} data-testid="queue-item" data-kind={q.kind}>
            <span class="queue-tag">{q.kind === "prompt" ? `queued #${pos}` : "steer"}</span>
            <span class="queue-text">{q.text}</span>
          </li>
        );
      })}
    </ol>
  );
}

/** The input: Enter sends, Shift+Enter is a new line, Escape stops. */
export function Composer(p: {
  enabled: boolean;
  busy: boolean;
  canStop: boolean;
  onSend: (text: string, steer: boolean) => Promise<boolean>;
  onStop: () => void;
}) {
  const [text, setText] = useState("");
  const [steer, setSteer] = useState(false);
  const ref = useRef<HTMLTextAreaElement>(null);
  const send = async () => {
    const t = text;
    if (t.trim() === "" || !p.enabled) return;
    setText("");
    const ok = await p.onSend(t, steer);
    if (!ok) setText((cur) => (cur === "" ? t : cur));
    ref.current?.focus();
  };
  return (
    <div class="composer">
      <textarea
        ref={ref}
        data-testid="prompt-input"
        aria-label="Message"
        placeholder={p.busy ? (steer ? "Steer the running agent…" : "Queue a message…") : "Message the agent… (Enter sends, Shift+Enter new line)"}
        rows={2}
        value={text}
        disabled={!p.enabled}
        onInput={(e) => setText((e.currentTarget as HTMLTextAreaElement).value)}
        onKeyDown={(e) => {
          if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
            e.preventDefault();
            void send();
          } else if (e.key === "Escape") {
            e.preventDefault();
            if (p.canStop) p.onStop();
          }
        }}
      />
      <div class="composer-actions">
        <label class="toggle" title="While the agent works, send as a steering message instead of queueing">
          <input
            type="checkbox"
            role="switch"
            data-testid="steer-mode"
            aria-label="Steer mode"
            aria-checked={steer ? "true" : "false"}
            checked={steer}
            onChange={(e) => setSteer((e.currentTarget as HTMLInputElement).checked)}
          />
          <span>steer</span>
        </label>
        <button type="button" class="primary" data-testid="send" aria-label="Send" disabled={!p.enabled} onClick={() => void send()}>
          Send
        </button>
        <button type="button" class="danger" data-testid="stop" aria-label="Stop" disabled={!p.canStop} onClick={p.onStop}>
          Stop
        </button>
      </div>
    </div>
  );
}
