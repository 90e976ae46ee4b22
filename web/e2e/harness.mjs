// The shared harness of the browser tests: a real `tack serve` subprocess,
// Debian's chromium driven by playwright-core, sessions made over REST,
// and waiting helpers that poll against a deadline (never a fixed sleep).
//
// Each test file calls setup() once; it starts one server and one browser
// for the file and stops both when the file's tests are done.

import { spawn } from 'node:child_process';
import http from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual, inspect } from 'node:util';
import { after, before } from 'node:test';
import { chromium } from 'playwright-core';

/** How long any one wait may take before the test fails. */
export const TIMEOUT = 10_000;

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

// Every tack serve this process started, so that an exit — even one
// through an uncaught error — leaves none behind.
const servers = new Set();
const killServers = () => {
  for (const p of servers) p.kill('SIGKILL');
};
process.on('exit', killServers);
// A signal (the test runner's timeout, the Go test's deadline, ^C) stops
// them too; Playwright closes its browsers on the same signals, then the
// process goes.
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    killServers();
    setTimeout(() => process.exit(1), 2_000);
  });
}

/**
 * Starts `tack serve` (binary from $TACK_BIN) on a free loopback port with
 * a fresh SQLite file in a directory of its own, which is also its
 * --script-dir (tests write script files there), and `--auth` when auth
 * (the auth file's object) is given. Resolves when the server printed its
 * address.
 */
export async function startServer({ auth } = {}) {
  const bin = process.env.TACK_BIN;
  if (!bin) throw new Error('TACK_BIN is not set: the path of a built tack binary');
  const dir = await mkdtemp(path.join(tmpdir(), 'tack-e2e-'));
  const args = ['serve', '--addr', '127.0.0.1:0', '--store', `sqlite:${path.join(dir, 'tack.db')}`, '--script-dir', dir];
  if (auth) {
    const file = path.join(dir, 'auth.json');
    await writeFile(file, JSON.stringify(auth));
    args.push('--auth', file);
  }
  // No model configuration from the environment: scripted models only.
  const { TACK_CONFIG, OPENAI_API_KEY, OPENAI_BASE_URL, ...childEnv } = process.env;
  const proc = spawn(bin, args, { cwd: dir, env: childEnv, stdio: ['ignore', 'ignore', 'pipe'] });
  servers.add(proc);
  const exited = new Promise((resolve) => proc.once('exit', (code, signal) => resolve({ code, signal })));
  let log = '';
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`tack serve printed no address in ${TIMEOUT} ms:\n${log}`)), TIMEOUT);
    proc.stderr.setEncoding('utf8');
    proc.stderr.on('data', (chunk) => {
      log += chunk;
      const m = /tack serve: listening on (http:\/\/\S+)/.exec(log);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`tack serve exited (${code ?? signal}) before listening:\n${log}`));
    });
  });
  // From now on neither the child nor its stderr keep this process alive:
  // a file whose server was not stopped still exits, and killServers ends
  // the server then.
  proc.unref();
  proc.stderr.unref();
  return {
    url,
    dir,
    log: () => log,
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill('SIGTERM');
        const killer = setTimeout(() => proc.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(killer);
      }
      servers.delete(proc);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Launches Debian's chromium ($CHROMIUM, else /usr/bin/chromium) headless. */
export function launchBrowser() {
  // launch() gives the browser a fresh user-data-dir of its own under
  // the temporary directory and removes it on close.
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: CHROMIUM_ARGS,
    timeout: 30_000,
  });
}

/**
 * A REST client of one server: api(method, path, body) answers
 * { status, body } with the body parsed as JSON when there is one.
 */
export function client(url, token) {
  return async function api(method, p, body) {
    const headers = {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (token) headers.authorization = `Bearer ${token}`;
    const res = await fetch(url + p, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  };
}

/**
 * Sets up a test file: before its tests, a server and a browser; after
 * them, both stopped. Returns an object whose fields are filled in by
 * then: url, api (a client), browser, and the helpers below.
 */
export function setup({ auth, token } = {}) {
  const env = {};
  const contexts = [];
  before(async () => {
    env.server = await startServer({ auth });
    env.url = env.server.url;
    env.api = client(env.url, token);
    env.browser = await launchBrowser();
  });
  after(async () => {
    for (const c of contexts) await c.close().catch(() => {});
    await env.browser?.close();
    await env.server?.stop();
  });

  /** Creates a session over REST; body holds the create_session fields. */
  env.createSession = async (body) => {
    const res = await env.api('POST', '/v1/sessions', body);
    if (res.status !== 201) throw new Error(`create session: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.session;
  };

  /**
   * Opens a page in a fresh browser context (its own storage) at path,
   * with the hook recorder installed, and returns it.
   */
  env.newPage = async (p = '/') => {
    const context = await env.browser.newContext({ viewport: { width: 1100, height: 760 } });
    contexts.push(context);
    context.setDefaultTimeout(TIMEOUT);
    await context.addInitScript(recorder);
    const page = await context.newPage();
    await page.goto(env.url + p);
    return page;
  };

  /** Opens /?session=id and waits until the page shows the session. */
  env.openSession = async (id, page) => {
    if (page) await page.goto(`${env.url}/?session=${encodeURIComponent(id)}`);
    else page = await env.newPage(`/?session=${encodeURIComponent(id)}`);
    await ready(page);
    return page;
  };

  /** get_state of a session over REST. */
  env.state = async (id) => {
    const res = await env.api('GET', `/v1/sessions/${encodeURIComponent(id)}`);
    if (res.status !== 200) throw new Error(`get_state ${id}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };

  /** get_messages of a session over REST, as "role: content" lines. */
  env.history = async (id) => {
    const res = await env.api('GET', `/v1/sessions/${encodeURIComponent(id)}/messages`);
    if (res.status !== 200) throw new Error(`get_messages ${id}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.messages.map((m) => `${m.role}: ${m.content}`);
  };

  /**
   * The events of a session from seq 1 on, read from its SSE stream up to
   * and including the first one for which last(event) is true.
   */
  env.events = (id, last) =>
    new Promise((resolve, reject) => {
      const out = [];
      // node:http rather than fetch: destroying the request closes its
      // connection at once, so no socket outlives the read and holds up
      // the server's shutdown.
      const req = http.get(
        `${env.url}/v1/sessions/${encodeURIComponent(id)}/events?since=0`,
        { agent: false, headers: token ? { authorization: `Bearer ${token}` } : {} },
        (res) => {
          let buf = '';
          res.setEncoding('utf8');
          res.on('data', (chunk) => {
            buf += chunk;
            let i;
            while ((i = buf.indexOf('\n\n')) >= 0) {
              const data = buf.slice(0, i).split('\n').find((l) => l.startsWith('data: '));
              buf = buf.slice(i + 2);
              if (!data) continue;
              const ev = JSON.parse(data.slice(6));
              out.push(ev);
              if (last(ev)) return done(null);
            }
          });
          res.on('end', () => done(new Error(`the event stream of ${id} ended before the awaited event`)));
        },
      );
      const timer = setTimeout(
        () => done(new Error(`no awaited event of ${id} in ${TIMEOUT} ms; got ${out.map((e) => e.type).join(' ')}`)),
        TIMEOUT,
      );
      req.on('error', (err) => done(err));
      let finished = false;
      function done(err) {
        if (finished) return;
        finished = true;
        clearTimeout(timer);
        req.destroy();
        if (err) reject(err);
        else resolve(out);
      }
    });

  return env;
}

/**
 * Waits until the page shows a loaded session: the status and the
 * context hooks are there and the input is enabled.
 */
export async function ready(page) {
  // The status indicator is hidden while idle: it need only be there.
  await hook(page, 'agent-status').waitFor({ state: 'attached' });
  await hook(page, 'context-usage').waitFor();
  await until('prompt-input enabled', () => hook(page, 'prompt-input').isEnabled(), true);
}

/** The locator of a data-testid hook. */
export function hook(page, id) {
  return page.getByTestId(id, { exact: true });
}

/** Types text into prompt-input and clicks send. */
export async function send(page, text) {
  await hook(page, 'prompt-input').fill(text);
  await hook(page, 'send').click();
}

/**
 * Every message hook in page order as "role: text" (see messageText).
 */
export function messages(page) {
  return hook(page, 'message').evaluateAll((els) => els.map((e) => `${e.dataset.role}: ${window.__tackText(e)}`));
}

/**
 * The text of a message hook: its text content without the tool cards
 * inside it (tool-call hooks), collapsed details (thinking) and decoration
 * hidden from screen readers (aria-hidden="true", such as a "You" label
 * that the message's aria-label already says), runs of white space as one
 * space.
 */
export function messageText(locator) {
  return locator.evaluate((e) => window.__tackText(e));
}

/**
 * What the page shows, read at one instant (one evaluate), so that a test
 * can wait for one hook and check others as they were at that moment:
 * status and statusText (agent-status), cards (call id → data-state),
 * messages (as messages() gives them), queue (its text), stopEnabled.
 */
export function snapshot(page) {
  return page.evaluate(() => {
    const one = (id) => document.querySelector(`[data-testid="${id}"]`);
    const all = (id) => [...document.querySelectorAll(`[data-testid="${id}"]`)];
    const status = one('agent-status');
    const stop = one('stop');
    return {
      status: status?.getAttribute('data-status') ?? null,
      statusText: status?.textContent.trim() ?? null,
      cards: Object.fromEntries(all('tool-call').map((e) => [e.getAttribute('data-call-id'), e.getAttribute('data-state')])),
      messages: all('message').map((e) => `${e.dataset.role}: ${window.__tackText(e)}`),
      queue: one('queue')?.textContent ?? null,
      stopEnabled: stop ? !stop.disabled : null,
    };
  });
}

/** The data-status of agent-status. */
export function status(page) {
  return hook(page, 'agent-status').getAttribute('data-status');
}

/** Whether a toggle hook (checkbox or switch) is on. */
export function checked(page, id) {
  return hook(page, id).evaluate((e) =>
    e.getAttribute('aria-checked') === 'true' || (e instanceof HTMLInputElement && e.checked),
  );
}

/**
 * Polls read() until its value equals want (deep equality), or satisfies
 * it when want is a function; fails after TIMEOUT with the last value.
 * Returns the value.
 */
export async function until(what, read, want, { timeout = TIMEOUT } = {}) {
  const ok = typeof want === 'function' ? want : (v) => isDeepStrictEqual(v, want);
  const deadline = Date.now() + timeout;
  let last;
  for (;;) {
    try {
      last = await read();
      if (ok(last)) return last;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      const wanted = typeof want === 'function' ? want.toString() : inspect(want, { depth: 5 });
      throw new Error(`${what}: still ${inspect(last, { depth: 5 })} after ${timeout} ms; want ${wanted}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * The values the recorder saw on the page, consecutive repeats folded:
 * key "agent-status" for data-status ("agent-status text" for
 * "<data-status>: <text>"), "tool-call:<call id>" for a tool
 * card's data-state, "context-usage" for data-level, "queue" for the
 * queue's text.
 */
export async function trace(page, key) {
  const all = await page.evaluate(() => window.__tackTrace);
  return all[key] ?? [];
}

// recorder runs in the page before its scripts: a MutationObserver that
// notes every value the watched hook attributes take, so that a test can
// assert the whole sequence of states a run went through, not only the
// ones it happened to poll.
function recorder() {
  window.__tackText = (e) => {
    const c = e.cloneNode(true);
    for (const t of c.querySelectorAll('[data-testid="tool-call"], details, [aria-hidden="true"]')) t.remove();
    return c.textContent.replace(/\s+/g, ' ').trim();
  };
  const trace = {};
  window.__tackTrace = trace;
  const note = (key, value) => {
    const seen = (trace[key] ??= []);
    if (value !== null && seen[seen.length - 1] !== value) seen.push(value);
  };
  const scan = () => {
    for (const e of document.querySelectorAll('[data-testid="agent-status"]')) {
      note('agent-status', e.getAttribute('data-status'));
      note('agent-status text', `${e.getAttribute('data-status')}: ${e.textContent.trim()}`);
    }
    for (const e of document.querySelectorAll('[data-testid="context-usage"]')) note('context-usage', e.getAttribute('data-level'));
    for (const e of document.querySelectorAll('[data-testid="queue"]')) note('queue', e.textContent);
    for (const e of document.querySelectorAll('[data-testid="tool-call"]')) {
      note(`tool-call:${e.getAttribute('data-call-id')}`, e.getAttribute('data-state'));
    }
  };
  new MutationObserver(scan).observe(document, {
    subtree: true,
    childList: true,
    attributes: true,
    attributeFilter: ['data-status', 'data-state', 'data-level', 'data-testid'],
    characterData: true,
  });
}

// The controls below are not in the contract's table; the page names
// them with data-testid hooks of its own: reject-reason (the reason next
// to Reject), answer-text (the free answer that `answer` sends),
// token-input and token-submit (the token prompt shown with --auth).

/** Rejects the pending approval, with reason in its reason field. */
export async function reject(page, reason) {
  await hook(page, 'reject-reason').fill(reason);
  await hook(page, 'reject').click();
}

/** Answers the pending question: response in the answer field, then `answer`. */
export async function answer(page, response) {
  await hook(page, 'answer-text').fill(response);
  await hook(page, 'answer').click();
}

/** The token prompt's field (shown with --auth). */
export function tokenInput(page) {
  return hook(page, 'token-input');
}

/** Fills the token prompt and submits it. */
export async function enterToken(page, token) {
  await tokenInput(page).fill(token);
  await hook(page, 'token-submit').click();
}
