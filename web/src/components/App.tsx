import { useCallback, useEffect, useMemo, useReducer, useRef, useState } from "preact/hooks";
import { Api, ApiError, FALLBACK_CATALOG, TOKEN_KEY, type Connection, type CreateSession } from "../api";
import { initialState, reduce, type ViewState } from "../reducer";
import { openSession } from "../session";
import type { WireCatalog, WireImage, WireSessionSummary } from "../wire";
import { Composer, QueuePanel } from "./Composer";
import { FilesPanel } from "./Files";
import { Header } from "./Header";
import { ApprovalCard, QuestionCard } from "./Loop";
import { Sidebar } from "./Sidebar";
import { Timeline } from "./Timeline";
import { TokenPrompt } from "./TokenPrompt";

const LIST_EVERY_MS = 2000;

function sessionFromUrl(): string | null {
  return new URLSearchParams(location.search).get("session");
}

function readToken(): string | null {
  try {
    return sessionStorage.getItem(TOKEN_KEY);
  } catch {
    return null;
  }
}

function message(err: unknown): string {
  if (err instanceof ApiError) return `${err.code}: ${err.message}`;
  return String(err);
}

/** The whole page. */
export function App() {
  const token = useRef<string | null>(readToken());
  const [needAuth, setNeedAuth] = useState(false);
  const [authFailed, setAuthFailed] = useState(false);
  const [epoch, setEpoch] = useState(0); // bumped when a new token is given: everything reloads
  const api = useMemo(
    () =>
      new Api({
        token: () => token.current,
        unauthorized: () => {
          setAuthFailed(token.current !== null);
          setNeedAuth(true);
        },
      }),
    [],
  );

  const [current, setCurrent] = useState<string | null>(sessionFromUrl());
  const [v, dispatch] = useReducer(reduce, current, initialState);
  const latest = useRef<ViewState>(v);
  latest.current = v;
  const [connection, setConnection] = useState<Connection>("connecting");
  const [sessions, setSessions] = useState<WireSessionSummary[]>([]);
  const [catalog, setCatalog] = useState<WireCatalog>(FALLBACK_CATALOG);
  const [flash, setFlash] = useState<string | null>(null);
  const [sidebarOpen, setSidebarOpen] = useState(false);

  // The URL names the open session; the browser's back and forward follow it.
  useEffect(() => {
    const onPop = () => setCurrent(sessionFromUrl());
    addEventListener("popstate", onPop);
    return () => removeEventListener("popstate", onPop);
  }, []);

  const navigate = useCallback((id: string) => {
    if (id !== sessionFromUrl()) history.pushState(null, "", `?session=${encodeURIComponent(id)}`);
    setCurrent(id);
    setSidebarOpen(false);
  }, []);

  // The open session: seed, then events.
  useEffect(() => {
    if (!current || needAuth) return;
    setFlash(null);
    const sub = openSession(api, current, dispatch, setConnection, (err) => {
      setConnection("closed");
      if (err instanceof ApiError && err.status === 404) setFlash(`Session ${current} was not found.`);
      else if (!(err instanceof ApiError && err.status === 401)) setFlash(`Cannot open ${current}: ${message(err)}`);
    });
    return () => sub.close();
  }, [api, current, needAuth, epoch]);

  // The session list, kept current by polling.
  const refreshList = useCallback(() => {
    api.listSessions().then(
      (r) => setSessions(r.sessions ?? []),
      () => undefined,
    );
  }, [api]);
  useEffect(() => {
    if (needAuth) return;
    refreshList();
    const t = setInterval(refreshList, LIST_EVERY_MS);
    return () => clearInterval(t);
  }, [refreshList, needAuth, epoch]);

  useEffect(() => {
    if (needAuth) return;
    api.catalog().then(setCatalog, () => undefined);
  }, [api, needAuth, epoch]);

  // Commands. Errors become notices; the list refreshes after each.
  const act = useCallback(
    async (cmd: string, body: Record<string, unknown> = {}): Promise<boolean> => {
      const id = latest.current.session;
      if (!id) return false;
      try {
        await api.command(id, cmd, body);
        return true;
      } catch (err) {
        dispatch({ type: "notice", level: "error", text: `${cmd} failed: ${message(err)}` });
        return false;
      } finally {
        refreshList();
      }
    },
    [api, refreshList],
  );

  const send = useCallback(
    async (text: string, steer: boolean, images: WireImage[] = []): Promise<boolean> => {
      const id = latest.current.session;
      if (!id) return false;
      const busy = latest.current.state !== "idle";
      const body: Record<string, unknown> = images.length > 0 ? { text, images } : { text };
      try {
        if (steer && busy) {
          await api.command(id, "steer", body);
        } else {
          dispatch({ type: "sending" });
          await api.command(id, "prompt", body);
        }
        return true;
      } catch (err) {
        dispatch({ type: "send_failed", message: `Not sent: ${message(err)}` });
        return false;
      } finally {
        refreshList();
      }
    },
    [api, refreshList],
  );

  // Edit and resend: the run in progress, its prompt included, is rolled back.
  const resend = useCallback(
    async (text: string): Promise<boolean> => {
      const id = latest.current.session;
      if (!id) return false;
      try {
        await api.command(id, "prompt", { text, if_busy: "rollback" });
        return true;
      } catch (err) {
        dispatch({ type: "notice", level: "error", text: `Not sent: ${message(err)}` });
        return false;
      } finally {
        refreshList();
      }
    },
    [api, refreshList],
  );

  const stop = useCallback(() => void act("abort", {}), [act]);
  const canStop = !!v.session && v.state !== "idle";

  // Escape stops, wherever the focus is (unless something else took the key).
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape" && !e.defaultPrevented && canStop && !needAuth) stop();
    };
    addEventListener("keydown", onKey);
    return () => removeEventListener("keydown", onKey);
  }, [canStop, stop, needAuth]);

  // Deleting is for good; the list asked for a confirmation first.
  const remove = useCallback(
    async (id: string) => {
      try {
        await api.deleteSession(id);
        if (id === latest.current.session) {
          history.pushState(null, "", location.pathname);
          setCurrent(null);
          dispatch({ type: "close" });
        }
      } catch (err) {
        setFlash(`Cannot delete ${id}: ${message(err)}`);
      } finally {
        refreshList();
      }
    },
    [api, refreshList],
  );

  const create = useCallback(
    async (req: CreateSession) => {
      try {
        const r = await api.createSession(req);
        refreshList();
        navigate(r.session);
      } catch (err) {
        setFlash(`Cannot create a session: ${message(err)}`);
      }
    },
    [api, navigate, refreshList],
  );

  // A fork opens at once: a new session with the history up to the message.
  const fork = useCallback(
    async (index: number) => {
      const id = latest.current.session;
      if (!id) return;
      try {
        const r = await api.command<{ session: string }>(id, "fork", { index });
        refreshList();
        navigate(r.session);
      } catch (err) {
        dispatch({ type: "notice", level: "error", text: `fork failed: ${message(err)}` });
      }
    },
    [api, navigate, refreshList],
  );
  const actions = useMemo(() => ({ onFork: (i: number) => void fork(i), onResend: resend }), [fork, resend]);

  const giveToken = (t: string) => {
    token.current = t;
    try {
      sessionStorage.setItem(TOKEN_KEY, t);
    } catch {
      // storage refused: the token lasts until the tab reloads
    }
    setNeedAuth(false);
    setEpoch((n) => n + 1);
  };

  const listTitle = sessions.find((x) => x.session === v.session)?.title ?? null;
  // A title the model just wrote shows in the list before the next poll.
  const listed = v.title && v.title !== listTitle ? sessions.map((x) => (x.session === v.session ? { ...x, title: v.title } : x)) : sessions;
  const pageTitle = v.title || listTitle || v.session;
  useEffect(() => {
    document.title = pageTitle ? `${pageTitle} · Tack` : "Tack";
  }, [pageTitle]);

  const approval = v.approvals[0];
  const connected = !!v.session && connection !== "unauthorized" && connection !== "closed";
  return (
    <div class="app">
      <Sidebar
        sessions={listed}
        current={v.session}
        catalog={catalog}
        open={sidebarOpen}
        onOpen={navigate}
        onCreate={(req) => void create(req)}
        onDelete={(id) => void remove(id)}
      />
      <main class="main">
        <Header
          v={v}
          listTitle={listTitle}
          models={catalog.models.map((m) => m.name)}
          connection={v.session ? connection : "closed"}
          onSwitchModel={(model) => void act("switch_model", { model })}
          onToggleSidebar={() => setSidebarOpen((o) => !o)}
        />
        {flash && (
          <div class="flash" role="alert">
            {flash}
          </div>
        )}
        {v.session ? (
          <Timeline v={v} actions={actions} />
        ) : (
          <div class="timeline">
            <div class="empty">Open a session from the list, or make a new one.</div>
          </div>
        )}
        <div class="dock">
          {approval && (
            <ApprovalCard
              approval={approval}
              more={v.approvals.length - 1}
              onApprove={(always) => void act("approve", { approval_id: approval.approvalId, always })}
              onReject={(reason) => void act("reject", reason.trim() ? { approval_id: approval.approvalId, reason } : { approval_id: approval.approvalId })}
            />
          )}
          {v.question && <QuestionCard question={v.question} onAnswer={(response) => void act("respond", { ref: v.question!.ref, response })} />}
          <QueuePanel queue={v.queue} />
          {v.session && <FilesPanel api={api} session={v.session} idleAt={v.state === "idle" ? v.lastSeq : null} onError={setFlash} />}
          <Composer enabled={connected} busy={v.state !== "idle"} canStop={canStop} onSend={send} onStop={stop} />
        </div>
      </main>
      {needAuth && <TokenPrompt onToken={giveToken} failed={authFailed} />}
    </div>
  );
}
