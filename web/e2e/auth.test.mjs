// With --auth the page asks for a token, refuses a wrong one, and with the
// right one lists the caller's sessions and opens them.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { enterToken, hook, messages, ready, send, setup, status, tokenInput, until } from './harness.mjs';

const TOKEN = 'tk_e2e_alice_3f9a1c';
const env = setup({ auth: { tokens: { [TOKEN]: 'alice', tk_e2e_bob_77d2e0: 'bob' } }, token: TOKEN });

const listed = (page) => hook(page, 'session-item').evaluateAll((els) => els.map((e) => e.dataset.session));

test('the page asks for a token, refuses a wrong one, and with the right one loads the session list', async () => {
  const id = await env.createSession({ session: 'auth-alice', script: { turns: [{ text: 'Only for Alice.' }] } });
  // Bob's session must never show in Alice's list.
  const bob = await (await fetch(`${env.url}/v1/sessions`, {
    method: 'POST',
    headers: { authorization: 'Bearer tk_e2e_bob_77d2e0', 'content-type': 'application/json' },
    body: JSON.stringify({ session: 'auth-bob', script: { turns: [{ text: 'Bob.' }] } }),
  })).json();
  assert.equal(bob.session, 'auth-bob');

  const page = await env.newPage('/');
  await tokenInput(page).waitFor();
  const refused = page.waitForResponse((r) => new URL(r.url()).pathname.startsWith('/v1/') && r.request().headers().authorization === 'Bearer tk_wrong_token');
  await enterToken(page, 'tk_wrong_token');
  assert.equal((await refused).status(), 401);
  // Refused: the page asks again and lists nothing.
  await until('the token prompt after a wrong token', () => tokenInput(page).isVisible(), true);
  assert.equal(await hook(page, 'session-item').count(), 0);

  await enterToken(page, TOKEN);
  await until('the session list after the right token', () => listed(page), [id]);
  assert.equal(await tokenInput(page).count(), 0);

  // The token is kept for this tab: a reload does not ask again.
  await page.reload();
  await until('the session list after a reload', () => listed(page), [id]);
  assert.equal(await tokenInput(page).count(), 0);

  // The session opens from the list and runs with the token.
  await hook(page, 'session-item').first().click();
  await until('the URL of the opened session', () => new URL(page.url()).searchParams.get('session'), id);
  await ready(page);
  await send(page, 'hello');
  await until('the run with a token', () => messages(page), ['user: hello', 'assistant: Only for Alice.']);
  await until('agent-status after the run', () => status(page), 'idle');
});

test('new-session makes a session with the default model, opens it and lists it', async () => {
  const page = await env.newPage('/');
  await enterToken(page, TOKEN);
  await until('the session list after the token', () => listed(page), (ids) => ids.includes('auth-alice'));
  const before = await listed(page);

  await hook(page, 'new-session').click();
  const id = await until('the URL of the new session', () => new URL(page.url()).searchParams.get('session'), (s) => s !== null && !before.includes(s));
  await ready(page);
  await until('the session list with the new session', () => listed(page).then((ids) => ids.toSorted()), [...before, id].toSorted());
  const state = await env.state(id);
  assert.equal(state.model, 'script:demo');
  assert.equal(await hook(page, 'model-select').inputValue(), 'script:demo');

  await send(page, 'what is here?');
  await until('the demo model\'s first reply', () => messages(page).then((m) => m.slice(0, 2)), ['user: what is here?', 'assistant: Let me look at the project.']);
  await until('agent-status after the demo run', () => status(page), 'idle');
});
