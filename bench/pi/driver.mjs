// The pi-agent-core driver of Tack's peer benchmark harness: it runs one
// scenario through pi's Agent (prompt, subscribe, steer, abort) on the
// scripted stream function of script.mjs — or, for http-turns, on pi-ai's
// own OpenAI provider talking to bench/cmd/openaisrv — and prints one JSON
// line per measurement, in the format of the Go drivers
// (bench/internal/measure).
// bench/run starts it:
//
//   node --expose-gc driver.mjs --scenario=turns --runs=200 --warmup=50 --cores=1
//   node --expose-gc driver.mjs --scenario=http-turns --base-url=http://127.0.0.1:8080/v1 --runs=200
//
// Flags: the Go drivers' (scenario, cores, runs, warmup, base-url,
// sessions, rounds, tool, tool-ms, steers, agents, chunks, subscribers,
// turns); serve-sse, Tack's server alone, is reported unsupported.

import { readFileSync } from "node:fs";
import { Agent } from "@mariozechner/pi-agent-core";
import { Type } from "typebox";
import { MODEL, scripted } from "./script.mjs";

const TURNS_PER_RUN = 10;
const DEADLINE_MS = 60_000;

const defaults = {
  scenario: "turns", cores: 0, runs: 100, warmup: 20, "base-url": "", sessions: 100, rounds: 3, tool: "none",
  "tool-ms": 500, steers: 10, agents: 10000, chunks: 100000, subscribers: 1, turns: 10,
};
const p = { ...defaults };
for (const arg of process.argv.slice(2)) {
  const m = /^--?([a-z-]+)=(.*)$/.exec(arg);
  if (!m || !(m[1] in defaults)) fatal(`bad flag ${arg}`);
  p[m[1]] = typeof defaults[m[1]] === "number" ? Number(m[2]) : m[2];
}

function fatal(msg) {
  process.stderr.write(`driver: ${msg}\n`);
  process.exit(1);
}

function emit(record) {
  process.stdout.write(JSON.stringify({ runtime: "pi", ...record }) + "\n");
}
const value = (scenario, cas, metric, unit, v) =>
  emit({ scenario, ...(cas && { case: cas }), cores: p.cores, metric, unit, value: v });
const samples = (scenario, cas, metric, unit, s) =>
  emit({ scenario, ...(cas && { case: cas }), cores: p.cores, metric, unit, samples: s });

const nowNs = () => process.hrtime.bigint();
const micros = (ns) => Number(ns) / 1000;
const cpuNs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) * 1000;
};
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
// within fails the driver when promise takes longer than DEADLINE_MS.
function within(promise, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), DEADLINE_MS);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const result = (text) => ({ content: [{ type: "text", text }], details: {} });

// The demo tools of docs/protocol.md#demo-tools the scenarios use.
const echoTool = {
  name: "echo",
  label: "echo",
  description: "Return the given text unchanged.",
  parameters: Type.Object({ text: Type.String({ description: "The text to return." }) }),
  execute: async (_id, params) => result(params.text),
};
const sleepTool = {
  name: "sleep",
  label: "sleep",
  description: "Wait for the given number of milliseconds. It stops early when the call is cancelled.",
  parameters: Type.Object({ ms: Type.Integer({ minimum: 0 }) }),
  execute: (_id, params, signal) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        signal?.removeEventListener("abort", onAbort);
        resolve(result(`slept ${params.ms} ms`));
      }, params.ms);
      const onAbort = () => {
        clearTimeout(timer);
        reject(new Error("aborted"));
      };
      signal?.addEventListener("abort", onAbort, { once: true });
    }),
};
// stubbornTool ignores its AbortSignal; started is told when it starts.
const stubbornTool = (started) => ({
  name: "sleep_stubborn",
  label: "sleep_stubborn",
  description: "Wait for the given number of milliseconds. It ignores cancellation.",
  parameters: Type.Object({ ms: Type.Integer({ minimum: 0 }) }),
  execute: async (_id, params) => {
    started();
    await sleep(params.ms);
    return result(`slept ${params.ms} ms`);
  },
});

const newAgent = (turns, tools, observe) =>
  new Agent({ initialState: { model: MODEL, tools }, streamFn: scripted(turns, observe) });

function echoTurns() {
  const turns = [];
  for (let i = 0; i < TURNS_PER_RUN - 1; i++) turns.push({ toolCalls: [{ name: "echo", args: { text: "ping" } }] });
  turns.push({ text: "done" });
  return turns;
}

// turns times runs of TURNS_PER_RUN turns, one fresh agent each (made and
// subscribed before the clock starts), prompt() to its settling.
async function turns() {
  const script = echoTurns();
  const batch = async (n) => {
    const agents = [];
    const counts = [];
    for (let i = 0; i < n; i++) {
      const a = newAgent(script, [echoTool]);
      counts.push(0);
      a.subscribe((ev) => {
        if (ev.type === "tool_execution_end") counts[i]++;
      });
      agents.push(a);
    }
    const cpu0 = cpuNs();
    const t0 = nowNs();
    for (let i = 0; i < n; i++) {
      await agents[i].prompt("go");
      if (counts[i] !== TURNS_PER_RUN - 1 || agents[i].state.errorMessage) {
        fatal(`run ${i}: ${counts[i]} tool calls, error ${agents[i].state.errorMessage}`);
      }
    }
    return { cpu: cpuNs() - cpu0, wall: Number(nowNs() - t0) };
  };
  await batch(p.warmup);
  const { cpu, wall } = await batch(p.runs);
  const n = p.runs * TURNS_PER_RUN;
  value("turns", "", "cpu_per_turn", "ns", cpu / n);
  value("turns", "", "wall_per_turn", "ns", wall / n);
}

// The reply and usage of bench/cmd/openaisrv (bench/internal/openaisrv's
// Reply and Usage).
const SERVER_REPLY = "Hello from the bench server.";
const SERVER_USAGE = { input: 10, output: 5 };

// httpTurns times runs of one turn each — prompt(), one reply streamed by
// the OpenAI-compatible server at --base-url through pi-ai's
// openai-completions provider (the Agent's default stream function), its
// settling — one fresh agent each (made and subscribed before the clock
// starts). Each run must end with the server's reply and usage.
async function httpTurns() {
  if (!p["base-url"]) fatal("http-turns needs --base-url");
  const model = {
    id: "bench",
    name: "bench",
    api: "openai-completions",
    provider: "bench",
    baseUrl: p["base-url"],
    reasoning: false,
    input: ["text"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: 8000,
    maxTokens: 1000,
  };
  const batch = async (n) => {
    const agents = [];
    for (let i = 0; i < n; i++) {
      const a = new Agent({ initialState: { model, tools: [] }, getApiKey: () => "bench" });
      a.subscribe(() => {});
      agents.push(a);
    }
    const cpu0 = cpuNs();
    const t0 = nowNs();
    for (const a of agents) {
      await a.prompt("go");
      const last = a.state.messages.at(-1);
      const text = last?.content?.filter((c) => c.type === "text").map((c) => c.text).join("");
      if (a.state.errorMessage || text !== SERVER_REPLY || last.usage.input !== SERVER_USAGE.input || last.usage.output !== SERVER_USAGE.output) {
        fatal(`reply ${JSON.stringify(text)} with usage ${JSON.stringify(last?.usage)}, error ${a.state.errorMessage}`);
      }
    }
    return { cpu: cpuNs() - cpu0, wall: Number(nowNs() - t0) };
  };
  await batch(p.warmup);
  const { cpu, wall } = await batch(p.runs);
  value("http-turns", "", "cpu_per_turn", "ns", cpu / p.runs);
  value("http-turns", "", "wall_per_turn", "ns", wall / p.runs);
}

// The answer of every turn of turns-1000, in chunks of ANSWER_CHUNK
// characters (bench/internal/measure's Answer and AnswerChunk).
const ANSWER = "Hello from the bench server.";
const ANSWER_CHUNK = 6;

// turns1000 runs p.sessions agents at once (made and subscribed before
// the clock), each p.warmup untimed turns and then p.turns timed ones back
// to back: await prompt(), the answer streamed in five chunks, the next
// prompt. The agents keep their conversations. The clock runs from
// starting them all to the last one settled. Each turn must end with the
// answer.
async function turns1000() {
  const script = [{ text: ANSWER, chunkSize: ANSWER_CHUNK }];
  const agents = [];
  for (let i = 0; i < p.sessions; i++) {
    const a = newAgent(script, []);
    a.subscribe(() => {});
    agents.push(a);
  }
  const run = (turns) =>
    within(
      Promise.all(
        agents.map(async (a) => {
          for (let k = 0; k < turns; k++) {
            await a.prompt("go");
            const last = a.state.messages.at(-1);
            const text = last?.content?.filter((c) => c.type === "text").map((c) => c.text).join("");
            if (a.state.errorMessage || text !== ANSWER) fatal(`turn: ${JSON.stringify(text)}, error ${a.state.errorMessage}`);
          }
        }),
      ),
      "the turns",
    );
  await run(p.warmup);
  const cpu0 = cpuNs();
  const t0 = nowNs();
  await run(p.turns);
  const wall = Number(nowNs() - t0);
  const cpu = cpuNs() - cpu0;
  const n = p.sessions * p.turns;
  const cas = `sessions=${p.sessions}`;
  value("turns-1000", cas, "turns_per_s", "1/s", n / (wall / 1e9));
  value("turns-1000", cas, "cpu_per_turn", "ns", cpu / n);
  value("turns-1000", cas, "cpu_total", "ns", cpu);
}

// abort makes p.sessions agents busy — streaming one character every 5 ms,
// or running sleep_stubborn — then calls abort() on each in turn. Each
// sample is the time from just before an agent's abort() to its listener
// receiving the first event that tells the abort — the assistant message
// ending with stopReason "aborted" — (abort_seen) and agent_end
// (abort_ended). It plays one round more than p.rounds: the first is
// reported apart (first_abort_seen, first_abort_ended), as the Go
// drivers' is (measure.AbortRounds), since it also pays for the
// process's warm-up (the JIT's first compilations, the heap growing).
async function abort() {
  const cas = `sessions=${p.sessions} tool=${p.tool}`;
  const metric = (name, round) => (round === 0 ? `first_${name}` : name);
  for (let round = 0; round < p.rounds + 1; round++) {
    const n = p.sessions;
    const sent = new Array(n).fill(0n);
    const seen = new Array(n).fill(0);
    const ended = new Array(n).fill(0);
    const ready = [];
    const agents = [];
    for (let i = 0; i < n; i++) {
      let busy;
      ready.push(new Promise((resolve) => (busy = resolve)));
      let a;
      if (p.tool === "stubborn") {
        a = newAgent(
          [{ toolCalls: [{ name: "sleep_stubborn", args: { ms: p["tool-ms"] } }] }, { text: "done" }],
          [stubbornTool(() => {})],
        );
      } else {
        a = newAgent([{ text: "a".repeat(100_000), chunkSize: 1, chunkDelayMs: 5 }], []);
      }
      a.subscribe((ev) => {
        if (ev.type === "tool_execution_start" || ev.assistantMessageEvent?.type === "text_delta") busy();
        if (sent[i] === 0n) return;
        if (!seen[i] && (ev.type === "agent_end" || (ev.type === "message_end" && ev.message.stopReason === "aborted"))) {
          seen[i] = micros(nowNs() - sent[i]);
        }
        if (ev.type === "agent_end") ended[i] = micros(nowNs() - sent[i]);
      });
      agents.push(a);
    }
    const runs = agents.map((a) => a.prompt("go"));
    await within(Promise.all(ready), "agents to be busy");
    await sleep(20);
    for (let i = 0; i < n; i++) {
      sent[i] = nowNs();
      agents[i].abort();
    }
    await within(Promise.all(runs), "the runs to end");
    if (seen.some((s) => !(s > 0))) fatal("an agent ended without telling the abort");
    samples("abort", cas, metric("abort_seen", round), "us", seen);
    samples("abort", cas, metric("abort_ended", round), "us", ended);
  }
}

// steer steers an agent while its sleep tool (which honours its
// AbortSignal) runs: each sample is the time from just before steer() to
// the stream function receiving a context that holds the steering text. The
// script answers every request with the same tool call; an agent takes at
// most 50 steers.
async function steer() {
  let want = null;
  let hit = null;
  const observe = (context) => {
    if (want === null) return;
    for (const m of context.messages) {
      if (m.role === "user" && (m.content === want || m.content?.[0]?.text === want)) {
        want = null;
        hit(nowNs());
        return;
      }
    }
  };
  const script = [{ toolCalls: [{ name: "sleep", args: { ms: p["tool-ms"] } }] }];
  const out = [];
  let agent = null;
  let run = null;
  let nextStart = null;
  for (let i = 0; i < p.steers; i++) {
    if (i % 50 === 0) {
      if (agent) {
        agent.abort();
        await run;
      }
      agent = newAgent(script, [sleepTool], observe);
      // nextStart resolves at the next tool_execution_start not yet waited for.
      let pending = 0;
      let waiter = null;
      agent.subscribe((ev) => {
        if (ev.type !== "tool_execution_start") return;
        if (waiter) {
          waiter();
          waiter = null;
        } else pending++;
      });
      nextStart = () => (pending > 0 ? (pending--, Promise.resolve()) : new Promise((resolve) => (waiter = resolve)));
      run = agent.prompt("go");
    }
    await within(nextStart(), "the tool to start");
    await sleep(10);
    const text = `steer ${i}`;
    const got = new Promise((resolve) => (hit = resolve));
    want = text;
    const t0 = nowNs();
    agent.steer({ role: "user", content: text, timestamp: Date.now() });
    const t1 = await within(got, "the steered request");
    out.push(micros(t1 - t0));
  }
  agent.abort();
  await run;
  samples("steer", "", "steer_to_request", "us", out);
}

// idle makes p.agents agents on the turn-overhead script with the echo tool
// and reports the live heap and the RSS they added, per agent.
async function idle() {
  const script = echoTurns();
  const warm = newAgent(script, [echoTool]);
  const settle = () => {
    globalThis.gc();
    globalThis.gc();
    const m = process.memoryUsage();
    return { heap: m.heapUsed, rss: m.rss };
  };
  const m0 = settle();
  const t0 = nowNs();
  const agents = [];
  for (let i = 0; i < p.agents; i++) agents.push(newAgent(script, [echoTool]));
  const create = Number(nowNs() - t0);
  const m1 = settle();
  const cas = `agents=${p.agents}`;
  value("idle", cas, "heap_per_agent", "B", (m1.heap - m0.heap) / p.agents);
  value("idle", cas, "rss_per_agent", "B", (m1.rss - m0.rss) / p.agents);
  value("idle", cas, "create_per_agent", "ns", create / p.agents);
  if (agents.length !== p.agents || !warm) fatal("lost agents");
}

// throughput streams p.chunks one-character chunks with no delay to
// p.subscribers listeners and reports the text_delta events they received
// per second, summed, from prompt() to its settling.
async function throughput() {
  const a = newAgent([{ text: "x".repeat(p.chunks), chunkSize: 1 }], []);
  let received = 0;
  for (let i = 0; i < p.subscribers; i++) {
    a.subscribe((ev) => {
      if (ev.type === "message_update" && ev.assistantMessageEvent.type === "text_delta") received++;
    });
  }
  const t0 = nowNs();
  await within(a.prompt("stream"), "the run");
  const elapsed = Number(nowNs() - t0) / 1e9;
  if (a.state.errorMessage) fatal(a.state.errorMessage);
  const cas = `subscribers=${p.subscribers}`;
  value("throughput", cas, "events_per_s", "1/s", received / elapsed);
  value("throughput", cas, "lost", "events", p.chunks * p.subscribers - received);
}

const pkg = JSON.parse(
  readFileSync(new URL("./node_modules/@mariozechner/pi-agent-core/package.json", import.meta.url), "utf8"),
);
emit({ meta: { version: pkg.version, lang: `node ${process.version}` } });
const serveSSE = async () =>
  emit({
    scenario: "serve-sse",
    cores: p.cores,
    unsupported: "pi-agent-core has no server: `tack serve` is measured alone, against the protocol's 100 ms abort bound",
  });
const scenarios = { turns, "http-turns": httpTurns, "turns-1000": turns1000, abort, steer, idle, throughput, "serve-sse": serveSSE };
if (!(p.scenario in scenarios)) fatal(`unknown scenario ${p.scenario}`);
try {
  await scenarios[p.scenario]();
} catch (err) {
  fatal(err?.stack ?? String(err));
}
