import { useRef, useState } from "preact/hooks";
import type { QueueItem } from "../reducer";
import type { WireImage } from "../wire";

/** The image types the server takes (docs/sessions.md). */
const IMAGE_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/** Reads a file as a data URL. */
function dataURL(f: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const r = new FileReader();
    r.onload = () => resolve(String(r.result));
    r.onerror = () => reject(r.error);
    r.readAsDataURL(f);
  });
}

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

/**
 * The input: Enter sends, Shift+Enter is a new line, Escape stops. Images
 * pasted into it or dropped on it go with the next message.
 */
export function Composer(p: {
  enabled: boolean;
  busy: boolean;
  canStop: boolean;
  onSend: (text: string, steer: boolean, images: WireImage[]) => Promise<boolean>;
  onStop: () => void;
}) {
  const [text, setText] = useState("");
  const [steer, setSteer] = useState(false);
  const [images, setImages] = useState<WireImage[]>([]);
  const [refused, setRefused] = useState<string | null>(null);
  const ref = useRef<HTMLTextAreaElement>(null);
  const attach = async (files: File[]) => {
    const taken = files.filter((f) => IMAGE_TYPES.includes(f.type));
    setRefused(taken.length < files.length ? "Only PNG, JPEG, GIF and WebP images can be attached." : null);
    const urls = await Promise.all(taken.map(dataURL));
    if (urls.length) setImages((cur) => [...cur, ...urls.map((url) => ({ url }))]);
  };
  const send = async () => {
    const t = text;
    const imgs = images;
    if ((t.trim() === "" && imgs.length === 0) || !p.enabled) return;
    setText("");
    setImages([]);
    const ok = await p.onSend(t, steer, imgs);
    if (!ok) {
      setText((cur) => (cur === "" ? t : cur));
      setImages((cur) => (cur.length === 0 ? imgs : cur));
    }
    ref.current?.focus();
  };
  return (
    <div
      class="composer"
      onDragOver={(e) => {
        if (e.dataTransfer?.types.includes("Files")) e.preventDefault();
      }}
      onDrop={(e) => {
        const files = Array.from(e.dataTransfer?.files ?? []);
        if (files.length === 0) return;
        e.preventDefault();
        void attach(files);
      }}
    >
      {(images.length > 0 || refused) && (
        <div class="attachments" aria-label="Attached images">
          {images.map((img, i) => (
            <span key={i} class="attachment" data-testid="attachment">
              <img src={img.url} alt={`Attached image ${i + 1}`} />
              <button
                type="button"
                data-testid="attachment-remove"
                aria-label={`Remove image ${i + 1}`}
                onClick={() => setImages((cur) => cur.filter((_, j) => j !== i))}
              >
                ×
              </button>
            </span>
          ))}
          {refused && <span class="attach-refused">{refused}</span>}
        </div>
      )}
      <textarea
        ref={ref}
        data-testid="prompt-input"
        aria-label="Message"
        placeholder={p.busy ? (steer ? "Steer the running agent…" : "Queue a message…") : "Message the agent… (Enter sends, Shift+Enter new line)"}
        rows={2}
        value={text}
        disabled={!p.enabled}
        onInput={(e) => setText((e.currentTarget as HTMLTextAreaElement).value)}
        onPaste={(e) => {
          const files = Array.from(e.clipboardData?.files ?? []);
          if (files.length === 0) return;
          e.preventDefault();
          void attach(files);
        }}
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
