// Opening a session: the seed (get_state + get_messages), then its events
// from since=0. A later events_lost (a gap after a reconnect) fetches a fresh
// seed; events that arrive meanwhile wait and apply on top of it. So do a
// compaction (compact_end), whose new, shorter history replaces the old,
// and an aborted run (agent_end "aborted"), which a rollback may have taken
// out of the history.

import { Api, ApiError, subscribe, type Connection, type Subscription } from "./api";
import type { Action } from "./reducer";
import type { TackEvent } from "./wire";

/** Fetches the seed of a session as one action. */
export async function fetchSeed(api: Api, id: string, replace = false): Promise<Action> {
  const [state, msgs] = await Promise.all([api.getState(id), api.getMessages(id)]);
  return { type: "seed", state, messages: msgs.messages ?? [], replace };
}

/** Follows one session until close(). */
export function openSession(
  api: Api,
  id: string,
  dispatch: (a: Action) => void,
  connection: (c: Connection) => void,
  failed: (err: ApiError | Error) => void,
): Subscription {
  let closed = false;
  let sub: Subscription | null = null;
  let waiting: TackEvent[] | null = null; // events held while a new seed loads
  let sawEvent = false;

  const reseed = (replace: boolean) => {
    waiting = [];
    fetchSeed(api, id, replace)
      .then((a) => {
        if (!closed) dispatch(a);
      })
      .catch((err: Error) => {
        if (!closed) failed(err);
      })
      .finally(() => {
        const held = waiting ?? [];
        waiting = null;
        if (!closed) for (const e of held) dispatch({ type: "event", event: e });
      });
  };

  dispatch({ type: "open", session: id });
  fetchSeed(api, id)
    .then((a) => {
      if (closed) return;
      dispatch(a);
      sub = subscribe(api, id, {
        event(e) {
          if (closed) return;
          const first = !sawEvent;
          sawEvent = true;
          if (waiting) {
            waiting.push(e);
            return;
          }
          dispatch({ type: "event", event: e });
          if (e.type === "events_lost" && !first) {
            dispatch({ type: "notice", text: "Events were missed while disconnected; caught up from the session's state" });
            reseed(false);
          }
          // A compaction replaced older messages with a summary: the working
          // history is shorter now and later commits count from its start.
          if (e.type === "compact_end" && Number(e.removed_count ?? 0) > 0) reseed(true);
          // An abort with rollback takes the run's messages out and says so
          // with no event of its own: the history is read again.
          if (e.type === "agent_end" && e.reason === "aborted") reseed(true);
        },
        connection,
      });
    })
    .catch((err: Error) => {
      if (!closed) failed(err);
    });

  return {
    close() {
      closed = true;
      sub?.close();
    },
  };
}
