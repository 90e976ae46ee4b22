// The context-usage hook: its exact text and data-level as the context
// fills a known window, and the form for an unknown window.
//
// token_usage's context_used is the input_tokens of the latest response
// (what the model was sent), and session_total_tokens adds up every
// response's input and output tokens; the scripts below give both.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hook, messages, send, setup, status, trace, until } from './harness.mjs';

const env = setup();

function usage(page) {
  const el = hook(page, 'context-usage');
  return Promise.all([el.innerText(), el.getAttribute('data-level')]).then(([text, level]) => ({ text: text.trim(), level }));
}

test('context usage at 0, 30, 50, 60, 80 and 90 percent of a known window', async () => {
  // Window 2000. Each row: input tokens of the turn, output tokens, then
  // the text and level the page must show after that turn.
  const steps = [
    [600, 20, 'Context: 30.0% | Session: 620 tokens', 'ok'],
    [1000, 20, 'Context: 50.0% | Session: 1.6K tokens', 'warn'],
    [1200, 30, 'Context: 60.0% | Session: 2.9K tokens', 'warn'],
    [1600, 20, 'Context: 80.0% | Session: 4.5K tokens', 'warn'],
    [1802, 20, 'Context: 90.1% | Session: 6.3K tokens', 'high'],
  ];
  const id = await env.createSession({
    session: 'context-known',
    script: {
      context_window: 2000,
      turns: steps.map(([input, output], i) => ({
        text: `Answer ${i + 1}.`,
        usage: { input_tokens: input, output_tokens: output },
      })),
    },
  });
  const page = await env.openSession(id);
  assert.deepEqual(await usage(page), { text: 'Context: 0.0% | Session: 0 tokens', level: 'ok' });

  for (const [i, [, , text, level]] of steps.entries()) {
    await send(page, `question ${i + 1}`);
    await until(`context-usage after turn ${i + 1}`, () => usage(page), { text, level });
    await until(`agent-status after turn ${i + 1}`, () => status(page), 'idle');
  }
  assert.deepEqual(await trace(page, 'context-usage'), ['ok', 'warn', 'high']);
  assert.equal((await messages(page)).length, 2 * steps.length);
  assert.deepEqual((await env.state(id)).context, { used: 1802, window: 2000, percent: 90.1 });
});

test('context usage of a model whose window is unknown counts tokens', async () => {
  const id = await env.createSession({
    session: 'context-unknown',
    script: {
      turns: [
        { text: 'A big context.', usage: { input_tokens: 15200, output_tokens: 120 } },
        { text: 'A small one.', usage: { input_tokens: 950, output_tokens: 30 } },
      ],
    },
  });
  const page = await env.openSession(id);
  await send(page, 'first');
  await until('context-usage after turn 1', () => usage(page).then((u) => u.text), 'Context: 15.2K tokens | Session: 15.3K tokens');
  await until('agent-status after turn 1', () => status(page), 'idle');
  await send(page, 'second');
  await until('context-usage after turn 2', () => usage(page).then((u) => u.text), 'Context: 950 tokens | Session: 16.3K tokens');

  const usages = (await env.events(id, (e) => e.type === 'agent_end' && e.run_id === 'r-2')).filter((e) => e.type === 'token_usage');
  assert.deepEqual(
    usages.map((u) => [u.context_used, u.context_window, u.context_percent, u.session_total_tokens]),
    [
      [15200, null, null, 15320],
      [950, null, null, 16300],
    ],
  );
});
