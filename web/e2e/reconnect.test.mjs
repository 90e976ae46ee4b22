// A reload in the middle of a run, and two pages on one session.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hook, messageText, messages, ready, send, setup, status, until } from './harness.mjs';

const env = setup();

test('a reload in the middle of a run catches up with no duplicated or lost text', async () => {
  const long =
    'After the tool, this reply streams for a good while so that the page can be reloaded half way through it; ' +
    'when the page is back, every word must be there exactly once.';
  const id = await env.createSession({
    session: 'reconnect-reload',
    script: {
      turns: [
        { text: 'First a short nap.', tool_calls: [{ name: 'sleep', args: { ms: 300 } }] },
        { text: long, chunk_size: 4, chunk_delay_ms: 40, tool_calls: [{ name: 'sleep', args: { ms: 1000 } }] },
        { text: 'Done.' },
      ],
    },
  });
  const page = await env.openSession(id);
  await send(page, 'nap, then talk');
  const reply = hook(page, 'message').nth(2);
  await until('the second reply streaming', () => messageText(reply), (t) => t.length >= 30 && t.length < long.length);

  await page.reload();
  await ready(page);
  assert.notEqual((await env.state(id)).state, 'idle', 'the run ended before the page was back: too slow a machine for this test');
  await until('the second reply after the reload', () => messageText(reply), long);
  await until('agent-status after the run', () => status(page), 'idle');
  assert.deepEqual(await messages(page), [
    'user: nap, then talk',
    'assistant: First a short nap.',
    `assistant: ${long}`,
    'assistant: Done.',
  ]);
  const cards = await hook(page, 'tool-call').evaluateAll((els) => els.map((e) => [e.dataset.callId, e.dataset.state]));
  assert.deepEqual(cards, [
    ['c-1', 'ok'],
    ['c-2', 'ok'],
  ]);
});

test('two pages on one session stay in sync', async () => {
  const id = await env.createSession({
    session: 'reconnect-two',
    script: {
      turns: [
        { text: 'Hello to both of you.', chunk_size: 4, chunk_delay_ms: 20 },
        { text: 'Second answer, also seen twice.', chunk_size: 4, chunk_delay_ms: 20 },
      ],
    },
  });
  const a = await env.openSession(id);
  const b = await env.openSession(id);

  await send(a, 'hi from page A');
  const first = ['user: hi from page A', 'assistant: Hello to both of you.'];
  await until('page A after its prompt', () => messages(a), first);
  await until('page B after the prompt of A', () => messages(b), first);
  await until('page B status', () => status(b), 'idle');

  await send(b, 'hi from page B');
  const both = [...first, 'user: hi from page B', 'assistant: Second answer, also seen twice.'];
  await until('page B after its prompt', () => messages(b), both);
  await until('page A after the prompt of B', () => messages(a), both);
  await until('page A status', () => status(a), 'idle');
  assert.deepEqual((await env.history(id)).length, 4);
});
