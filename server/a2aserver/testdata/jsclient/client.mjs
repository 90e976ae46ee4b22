// The official A2A JS client (@a2a-js/sdk, unmodified, at the version
// package-lock.json pins) driving Tack's A2A server: node client.mjs
// BASE_URL [TOKEN]. It discovers the agents hello, slow and guarded of
// server/agentrun/agentruntest, streams an answer, cancels a run
// mid-stream and approves a held tool call, and prints one JSON object
// per check on stdout for the Go test (cmd/tack TestA2AJSClient).
import { randomUUID } from "node:crypto";
import { Role, TaskState } from "@a2a-js/sdk";
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory } from "@a2a-js/sdk/client";

const [base, token] = process.argv.slice(2);
const authed = (input, init = {}) => {
  const headers = new Headers(init.headers);
  if (token) headers.set("Authorization", `Bearer ${token}`);
  return fetch(input, { ...init, headers });
};
const factory = new ClientFactory(
  ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl: authed })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl: authed }),
  }),
);
const client = (agent) => factory.createFromUrl(`${base}/a2a/${agent}/`);
const message = (parts, taskId = "") => ({
  message: { messageId: randomUUID(), contextId: "", taskId, role: Role.ROLE_USER, parts, metadata: undefined, extensions: [], referenceTaskIds: [] },
});
const text = (t) => ({ content: { $case: "text", value: t } });
const textOf = (parts = []) => parts.map((p) => (p.content?.$case === "text" ? p.content.value : "")).join("");
const stateName = (s) => TaskState[s] ?? String(s);
const report = (o) => console.log(JSON.stringify(o));

// stream sends a message streaming and sums up what came: states in
// order, the artifact text, the last status message, the task id; at
// sees each event first.
async function stream(c, req, at) {
  const out = { states: [], text: "", status: null, task: "" };
  for await (const ev of c.sendMessageStream(req)) {
    if (at) await at(ev);
    const p = ev.payload;
    if (p?.$case === "task") {
      out.task = p.value.id;
      out.states.push(stateName(p.value.status.state));
    } else if (p?.$case === "statusUpdate") {
      out.task = p.value.taskId;
      out.states.push(stateName(p.value.status.state));
      out.status = p.value.status.message ?? null;
    } else if (p?.$case === "artifactUpdate") {
      out.task = p.value.taskId;
      out.text += textOf(p.value.artifact?.parts);
    }
  }
  return out;
}

// discover: the card names the agent and says it streams.
{
  const card = await new DefaultAgentCardResolver({ fetchImpl: authed }).resolve(`${base}/a2a/hello/`);
  report({ check: "discover", name: card.name, description: card.description, streaming: card.capabilities?.streaming ?? false });
}

// stream: the answer as artifact updates, then completed.
{
  const o = await stream(await client("hello"), message([text("hi")]));
  report({ check: "stream", states: o.states, text: o.text });
}

// cancel: cancelTask at the first artifact update; the canceled status
// reaches the stream, and how long after the cancel is measured.
{
  const c = await client("slow");
  let sent = 0;
  let seen = -1;
  const o = await stream(c, message([text("go on")]), async (ev) => {
    const p = ev.payload;
    if (p?.$case === "artifactUpdate" && !sent) {
      sent = performance.now();
      c.cancelTask({ tenant: "", id: p.value.taskId, metadata: undefined }).catch((e) => report({ check: "cancel-error", error: String(e) }));
    }
    if (p?.$case === "statusUpdate" && p.value.status.state === TaskState.TASK_STATE_CANCELED) {
      seen = performance.now() - sent;
    }
  });
  report({ check: "cancel", states: o.states, ms: seen });
}

// approve: the held call makes the task input-required with the
// approval in a data part; a message with the decision resumes it.
{
  const c = await client("guarded");
  const o = await stream(c, message([text("echo it")]));
  const data = (o.status?.parts ?? []).find((p) => p.content?.$case === "data")?.content.value ?? {};
  const then = await stream(c, message([{ content: { $case: "data", value: { approval_id: data.approval_id, decision: "approve" } } }], o.task));
  report({ check: "approve", states: o.states, approval: data.approval_id, tool: data.tool, then: then.states, text: then.text });
}
