import type { Connection } from "../api";
import { contextLevel, contextText } from "../format";
import type { ViewState } from "../reducer";

const CONNECTION_TEXT: Record<Connection, string> = {
  connecting: "connecting…",
  live: "live",
  reconnecting: "reconnecting…",
  unauthorized: "needs a token",
  closed: "closed",
};

/** The context-usage indicator (exact text and data-level of PROTOCOL §5). */
export function ContextUsageView({ usage }: { usage: ViewState["usage"] }) {
  const level = contextLevel(usage);
  return (
    <span class={`ctx ctx-${level}`} data-testid="context-usage" data-level={level} aria-label={`Context usage, level ${level}`}>
      {contextText(usage)}
    </span>
  );
}

/** The header: session title, context usage, model, connection. */
export function Header(p: {
  v: ViewState;
  /** The title from the session list, while get_state has none. */
  listTitle: string | null;
  models: string[];
  connection: Connection;
  onSwitchModel: (model: string) => void;
  onToggleSidebar: () => void;
}) {
  const { v } = p;
  const title = v.title || p.listTitle;
  const models = v.model && !p.models.includes(v.model) ? [v.model, ...p.models] : p.models;
  return (
    <header class="header">
      <button type="button" class="menu" aria-label="Show or hide the sessions" onClick={p.onToggleSidebar}>
        ☰
      </button>
      <div class="title" title={v.session ?? ""}>
        <span class="title-text">{title || v.session || "Tack"}</span>
        {title && v.session && <span class="title-id">{v.session}</span>}
      </div>
      <ContextUsageView usage={v.usage} />
      <label class="model">
        <span class="sr-only">Model</span>
        <select
          data-testid="model-select"
          aria-label="Model"
          value={v.model}
          disabled={!v.session}
          onChange={(e) => {
            const m = (e.currentTarget as HTMLSelectElement).value;
            if (m && m !== v.model) p.onSwitchModel(m);
          }}
        >
          {models.map((m) => (
            <option key={m} value={m}>
              {m}
            </option>
          ))}
        </select>
      </label>
      <span class={`conn conn-${p.connection}`} data-testid="connection" data-connection={p.connection} aria-live="polite">
        <span class="conn-dot" aria-hidden="true" />
        {CONNECTION_TEXT[p.connection]}
      </span>
    </header>
  );
}
