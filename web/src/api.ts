// The HTTP client: REST calls under /v1 with the bearer token, and a
// session's event stream read with fetch() so that the Authorization header
// can be sent (EventSource cannot), resumed with Last-Event-ID after a drop.

import type { TackEvent, WireCatalog, WireMessage, WireSessionSummary, WireState } from "./wire";

/** An error answer of the API: the HTTP status and the protocol's code. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Where the token lives between reloads of the tab. */
export const TOKEN_KEY = "tack.token";

/** What the client needs from the page. */
export interface ApiHooks {
  /** The bearer token, or null to send none. */
  token(): string | null;
  /** Called on every 401 answer. */
  unauthorized(): void;
}

/** The model chooser's fallback while GET /v1/catalog is not served. */
export const FALLBACK_CATALOG: WireCatalog = {
  models: [{ name: "script:demo", context_window: 8000 }],
  default_model: "script:demo",
  tools: [],
  plugins: [],
};

/** The fields of POST /v1/sessions the page sets. */
export interface CreateSession {
  agent?: string;
  model?: string;
  system?: string;
  tools?: string[];
  plugins?: { name: string; config: Record<string, unknown> }[];
}

/** The REST half of the API. */
export class Api {
  constructor(
    private readonly hooks: ApiHooks,
    private readonly base = "",
  ) {}

  /** Headers for a request; the bearer token when there is one. */
  headers(extra: Record<string, string> = {}): Record<string, string> {
    const h: Record<string, string> = { ...extra };
    const t = this.hooks.token();
    if (t) h.Authorization = `Bearer ${t}`;
    return h;
  }

  /** The URL of a path under the API's base. */
  url(path: string): string {
    return this.base + path;
  }

  /** One request; the parsed JSON body, or an ApiError. */
  async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const init: RequestInit = { method, headers: this.headers(body === undefined ? {} : { "Content-Type": "application/json" }) };
    if (body !== undefined) init.body = JSON.stringify(body);
    let res: Response;
    try {
      res = await fetch(this.url(path), init);
    } catch (err) {
      throw new ApiError(0, "network", `cannot reach the server: ${String(err)}`);
    }
    if (res.status === 401) this.hooks.unauthorized();
    if (res.status === 204) return undefined as T;
    const text = await res.text();
    let data: unknown = undefined;
    try {
      data = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: reported below when the status says it failed
    }
    if (!res.ok) {
      const e = (data as { error?: { code?: string; message?: string } } | undefined)?.error;
      throw new ApiError(res.status, e?.code ?? "http_" + res.status, e?.message ?? (text || res.statusText));
    }
    return data as T;
  }

  listSessions(): Promise<{ sessions: WireSessionSummary[]; next?: string }> {
    return this.call("GET", "/v1/sessions?limit=100");
  }

  /** The catalog of models, tools and plugins; the fallback where the route is missing (404). */
  async catalog(): Promise<WireCatalog> {
    try {
      return await this.call<WireCatalog>("GET", "/v1/catalog");
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) return FALLBACK_CATALOG;
      throw err;
    }
  }

  createSession(req: CreateSession): Promise<{ session: string }> {
    return this.call("POST", "/v1/sessions", req);
  }

  /** DELETE /v1/sessions/{id}: the session and everything of it, for good. */
  deleteSession(id: string): Promise<void> {
    return this.call("DELETE", `/v1/sessions/${enc(id)}`);
  }

  getState(id: string): Promise<WireState> {
    return this.call("GET", `/v1/sessions/${enc(id)}`);
  }

  getMessages(id: string): Promise<{ messages: WireMessage[] }> {
    return this.call("GET", `/v1/sessions/${enc(id)}/messages`);
  }

  /** The files of the session's workspace. */
  listFiles(id: string): Promise<{ files: WireFile[] }> {
    return this.call("GET", `/v1/sessions/${enc(id)}/files`);
  }

  /** Writes a file of the session's workspace (PUT, the body is the file). */
  async putFile(id: string, path: string, body: Blob): Promise<WireFile> {
    const res = await fetch(this.url(fileURL(id, path)), { method: "PUT", headers: this.headers(), body });
    if (res.status === 401) this.hooks.unauthorized();
    const text = await res.text();
    if (!res.ok) {
      let e: { code?: string; message?: string } | undefined;
      try {
        e = (JSON.parse(text) as { error?: { code?: string; message?: string } }).error;
      } catch {
        // not JSON
      }
      throw new ApiError(res.status, e?.code ?? "http_" + res.status, e?.message ?? (text || res.statusText));
    }
    return JSON.parse(text) as WireFile;
  }

  /** A file of the session's workspace, as a Blob (the request carries the token). */
  async getFile(id: string, path: string): Promise<Blob> {
    const res = await fetch(this.url(fileURL(id, path)), { headers: this.headers() });
    if (res.status === 401) this.hooks.unauthorized();
    if (!res.ok) throw new ApiError(res.status, "http_" + res.status, await res.text());
    return res.blob();
  }

  /** POST /v1/sessions/{id}/{command} with the command's body. */
  command<T = unknown>(id: string, cmd: string, body: Record<string, unknown> = {}): Promise<T> {
    return this.call("POST", `/v1/sessions/${enc(id)}/${cmd}`, body);
  }
}

function enc(id: string): string {
  return encodeURIComponent(id);
}

/** The route of a workspace file: each part of the path escaped. */
function fileURL(id: string, path: string): string {
  return `/v1/sessions/${enc(id)}/files/${path.split("/").map(encodeURIComponent).join("/")}`;
}

/** One file of GET /v1/sessions/{id}/files. */
export interface WireFile {
  path: string;
  size: number;
  modified: string;
}

/** The event stream's connection state. */
export type Connection = "connecting" | "live" | "reconnecting" | "unauthorized" | "closed";

/** What a subscription reports. */
export interface StreamHandlers {
  event(e: TackEvent): void;
  connection(c: Connection): void;
}

/** One parsed SSE message. */
export interface SseMessage {
  id: string | null;
  event: string;
  data: string;
}

/**
 * Splits an SSE byte stream, decoded, into messages (the WHATWG rules for
 * id, event, data and comments). Feed it text as it arrives; it returns the
 * messages completed so far.
 */
export class SseParser {
  private buf = "";
  private id: string | null = null;
  private event = "";
  private data: string[] = [];
  private hasData = false;

  push(chunk: string): SseMessage[] {
    this.buf += chunk;
    const out: SseMessage[] = [];
    for (;;) {
      const m = /\r\n|\r|\n/.exec(this.buf);
      if (!m) break;
      // A lone \r at the end may be the first half of \r\n: wait for more.
      if (m[0] === "\r" && m.index === this.buf.length - 1) break;
      const line = this.buf.slice(0, m.index);
      this.buf = this.buf.slice(m.index + m[0].length);
      if (line === "") {
        if (this.hasData) out.push({ id: this.id, event: this.event || "message", data: this.data.join("\n") });
        this.id = null;
        this.event = "";
        this.data = [];
        this.hasData = false;
        continue;
      }
      if (line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? "" : line.slice(colon + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (field === "data") {
        this.data.push(value);
        this.hasData = true;
      } else if (field === "event") this.event = value;
      else if (field === "id") this.id = value;
    }
    return out;
  }
}

/** A live subscription; close() ends it for good. */
export interface Subscription {
  close(): void;
}

/**
 * Follows a session's events from since=0: replay, then live. After a drop it
 * reconnects with Last-Event-ID = the highest seq seen, so nothing is lost
 * or doubled; events at or below that seq are dropped here as well.
 */
export function subscribe(api: Api, session: string, h: StreamHandlers): Subscription {
  let lastSeq = 0;
  let closed = false;
  let ctrl: AbortController | null = null;
  let delay = 250;
  let timer: ReturnType<typeof setTimeout> | null = null;

  const run = async (first: boolean) => {
    if (closed) return;
    h.connection(first ? "connecting" : "reconnecting");
    ctrl = new AbortController();
    const headers = api.headers({ Accept: "text/event-stream" });
    if (lastSeq > 0) headers["Last-Event-ID"] = String(lastSeq);
    try {
      const res = await fetch(api.url(`/v1/sessions/${enc(session)}/events?since=${lastSeq}`), { headers, signal: ctrl.signal, cache: "no-store" });
      if (res.status === 401) {
        h.connection("unauthorized");
        await api.call("GET", `/v1/sessions/${enc(session)}`).catch(() => undefined); // tells the page (hooks.unauthorized)
        closed = true;
        return;
      }
      if (res.status === 404) {
        h.connection("closed");
        closed = true;
        return;
      }
      if (!res.ok || !res.body) throw new Error(`events: HTTP ${res.status}`);
      h.connection("live");
      delay = 250;
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      const parser = new SseParser();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        for (const m of parser.push(value)) {
          let e: TackEvent;
          try {
            e = JSON.parse(m.data) as TackEvent;
          } catch {
            continue;
          }
          if (typeof e.seq !== "number") e.seq = 0;
          if (e.seq > 0) {
            if (e.seq <= lastSeq) continue;
            lastSeq = e.seq;
          }
          h.event(e);
        }
      }
    } catch {
      // dropped: reconnect below
    }
    if (closed) return;
    h.connection("reconnecting");
    timer = setTimeout(() => void run(false), delay);
    delay = Math.min(delay * 2, 4000);
  };
  void run(true);
  return {
    close() {
      closed = true;
      if (timer) clearTimeout(timer);
      ctrl?.abort();
    },
  };
}
