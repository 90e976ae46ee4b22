import { useState } from "preact/hooks";
import type { CreateSession } from "../api";
import type { WireCatalog, WireSessionSummary } from "../wire";

/** "3 min ago" from an RFC 3339 time; empty when absent. */
export function ago(ts: string | null | undefined, now: number): string {
  if (!ts) return "";
  const t = Date.parse(ts);
  if (Number.isNaN(t)) return "";
  const s = Math.max(0, Math.round((now - t) / 1000));
  if (s < 60) return "just now";
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return new Date(t).toLocaleDateString();
}

/** The caller's sessions, and the form that makes a new one. */
export function Sidebar(p: {
  sessions: WireSessionSummary[];
  current: string | null;
  catalog: WireCatalog;
  open: boolean;
  onOpen: (id: string) => void;
  onCreate: (req: CreateSession) => void;
  onDelete: (id: string) => void;
}) {
  const now = Date.now();
  // The session whose delete waits for a confirmation, if any.
  const [confirming, setConfirming] = useState<string | null>(null);
  return (
    <aside class={`sidebar${p.open ? " sidebar-open" : ""}`} aria-label="Sessions">
      <NewSessionForm catalog={p.catalog} onCreate={p.onCreate} />
      <h2 class="side-h">Sessions</h2>
      <ul class="sessions" data-testid="session-list" aria-label="Your sessions">
        {p.sessions.length === 0 && <li class="empty">No sessions yet.</li>}
        {p.sessions.map((s) => (
          <li key={s.session}>
            <button
              type="button"
              class={`session${s.session === p.current ? " session-current" : ""}`}
              data-testid="session-item"
              data-session={s.session}
              aria-current={s.session === p.current ? "page" : undefined}
              aria-label={`Open session ${s.title || s.session} (${s.state})`}
              onClick={() => p.onOpen(s.session)}
            >
              <span class="session-title">{s.title || s.session}</span>
              <span class="session-meta">
                <span class={`badge badge-${s.state}`}>{s.state}</span>
                {s.updated_at && <span class="session-ago">{ago(s.updated_at, now)}</span>}
              </span>
            </button>
            {confirming === s.session ? (
              <span class="session-confirm" role="group" aria-label={`Delete ${s.title || s.session} for good?`}>
                <span>Delete for good?</span>
                <button
                  type="button"
                  class="danger"
                  data-testid="session-delete-confirm"
                  data-session={s.session}
                  aria-label={`Yes, delete session ${s.title || s.session}`}
                  onClick={() => {
                    setConfirming(null);
                    p.onDelete(s.session);
                  }}
                >
                  Delete
                </button>
                <button type="button" data-testid="session-delete-cancel" aria-label="Keep the session" onClick={() => setConfirming(null)}>
                  Keep
                </button>
              </span>
            ) : (
              <button
                type="button"
                class="session-delete"
                data-testid="session-delete"
                data-session={s.session}
                aria-label={`Delete session ${s.title || s.session}`}
                title="Delete this session for good"
                onClick={() => setConfirming(s.session)}
              >
                <span aria-hidden="true">×</span>
              </button>
            )}
          </li>
        ))}
      </ul>
    </aside>
  );
}

function NewSessionForm({ catalog, onCreate }: { catalog: WireCatalog; onCreate: (req: CreateSession) => void }) {
  const [agent, setAgent] = useState("");
  const [model, setModel] = useState("");
  const [tools, setTools] = useState<string[]>([]);
  const [plugins, setPlugins] = useState<string[]>([]);
  const [system, setSystem] = useState("");
  const agents = catalog.agents ?? [];
  const template = agents.find((a) => a.name === agent);
  // An agent brings its own model unless one is picked here.
  const chosen = model || (template ? template.model || "" : catalog.default_model || catalog.models[0]?.name || "");
  const toggle = (list: string[], x: string) => (list.includes(x) ? list.filter((y) => y !== x) : [...list, x]);
  const submit = (e: Event) => {
    e.preventDefault();
    const req: CreateSession = {};
    if (agent) req.agent = agent;
    if (chosen) req.model = chosen;
    if (system.trim()) req.system = system;
    if (tools.length) req.tools = tools;
    if (plugins.length) req.plugins = plugins.map((name) => ({ name, config: {} }));
    onCreate(req);
  };
  return (
    <form class="new" onSubmit={submit} aria-label="New session">
      <button type="submit" class="primary" data-testid="new-session" aria-label="Create a new session">
        + New session
      </button>
      <details class="new-opts">
        <summary>Options</summary>
        {agents.length > 0 && (
          <label class="field">
            <span>Agent</span>
            <select
              aria-label="Agent of the new session"
              data-testid="agent-select"
              value={agent}
              onChange={(e) => setAgent((e.currentTarget as HTMLSelectElement).value)}
            >
              <option value="">(none)</option>
              {agents.map((a) => (
                <option key={a.name} value={a.name} title={a.description}>
                  {a.name}
                </option>
              ))}
            </select>
          </label>
        )}
        <label class="field">
          <span>Model</span>
          <select aria-label="Model of the new session" value={chosen} onChange={(e) => setModel((e.currentTarget as HTMLSelectElement).value)}>
            {catalog.models.map((m) => (
              <option key={m.name} value={m.name}>
                {m.name}
                {m.context_window ? ` (${m.context_window} tokens)` : ""}
              </option>
            ))}
          </select>
        </label>
        {catalog.tools.length > 0 && (
          <fieldset class="checks">
            <legend>Tools</legend>
            {catalog.tools.map((t) => (
              <label key={t.name} title={t.description}>
                <input type="checkbox" aria-label={`Tool ${t.name}`} checked={tools.includes(t.name)} onChange={() => setTools(toggle(tools, t.name))} />
                {t.name}
              </label>
            ))}
          </fieldset>
        )}
        {catalog.plugins.length > 0 && (
          <fieldset class="checks">
            <legend>Plugins</legend>
            {catalog.plugins.map((name) => (
              <label key={name}>
                <input type="checkbox" aria-label={`Plugin ${name}`} checked={plugins.includes(name)} onChange={() => setPlugins(toggle(plugins, name))} />
                {name}
              </label>
            ))}
          </fieldset>
        )}
        <label class="field">
          <span>System prompt</span>
          <textarea aria-label="System prompt" rows={3} value={system} onInput={(e) => setSystem((e.currentTarget as HTMLTextAreaElement).value)} />
        </label>
      </details>
    </form>
  );
}
