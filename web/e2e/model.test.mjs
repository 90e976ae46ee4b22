// Switching the model from model-select.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hook, messages, send, setup, status, until } from './harness.mjs';

const env = setup();

test('model-select switches the session to another model and the next run uses it', async () => {
  const id = await env.createSession({
    session: 'model-switch',
    script: { context_window: 1000, turns: [{ text: 'The inline model answers.' }] },
  });
  const page = await env.openSession(id);
  await send(page, 'who answers?');
  await until('the first answer', () => messages(page), ['user: who answers?', 'assistant: The inline model answers.']);
  await until('agent-status after the first run', () => status(page), 'idle');

  // script:demo is always offered; its first turn says a fixed sentence
  // and lists a few files with shell.
  await hook(page, 'model-select').selectOption('script:demo');
  await until('the session model after the switch', () => env.state(id).then((s) => s.model), 'script:demo');
  assert.equal(await hook(page, 'model-select').inputValue(), 'script:demo');

  await send(page, 'and now?');
  await until('the reply of the demo model', () => messages(page).then((m) => m[3]), 'assistant: Let me look at the project.');
  await until('agent-status after the demo run', () => status(page), 'idle');
  const events = await env.events(id, (e) => e.type === 'agent_end' && e.run_id === 'r-2');
  assert.deepEqual(
    events.filter((e) => e.type === 'model_switched').map((e) => [e.from, e.to]),
    [['script:inline', 'script:demo']],
  );
  assert.deepEqual(
    events.filter((e) => e.type === 'request_start').map((e) => e.model),
    ['script:inline', 'script:demo', 'script:demo'],
  );
  const history = await env.history(id);
  assert.deepEqual(history.slice(0, 4), [
    'user: who answers?',
    'assistant: The inline model answers.',
    'user: and now?',
    'assistant: Let me look at the project.',
  ]);
  assert.match(history[5], /^assistant: Here is what I found/);
});
