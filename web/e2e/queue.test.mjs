// Typing while the agent works: a message is queued and answered after,
// or, with steer-mode on, steers the run. The queued case also saves the
// README's screenshot when TACK_SCREENSHOT=1.

import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { checked, hook, messages, send, setup, snapshot, status, trace, until } from './harness.mjs';

const env = setup();
const screenshot = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'docs', 'screenshot.png');

test('a message sent while busy waits in the queue, then is answered after and leaves the queue', async () => {
  const id = await env.createSession({
    session: 'queue-busy',
    script: {
      context_window: 8000,
      turns: [
        {
          thinking: 'The user asks whether the build is broken. Run it before answering.',
          text: 'Let me look at the build first; it takes a moment.',
          tool_calls: [{ name: 'sleep', args: { ms: 3000 } }],
          usage: { input_tokens: 5120, output_tokens: 64 },
        },
        { text: 'The build is fine.', usage: { input_tokens: 5300, output_tokens: 12 } },
        { text: 'Then I will run the tests as you asked.', usage: { input_tokens: 5400, output_tokens: 20 } },
      ],
    },
  });
  const page = await env.openSession(id);
  await send(page, 'Is the build broken?');
  await until('tool card while sleep runs', () => hook(page, 'tool-call').getAttribute('data-state'), 'running');

  await send(page, 'and then run the tests');
  const queue = hook(page, 'queue');
  // The recorder saw every text the queue had: the message was in it.
  await until('what the queue showed', () => trace(page, 'queue'), (t) => t.some((q) => q.includes('and then run the tests')));
  if (process.env.TACK_SCREENSHOT === '1') {
    const busy = await snapshot(page);
    assert.ok(busy.queue.includes('and then run the tests') && busy.cards['c-1'] === 'running', 'the screenshot must show the tool running and the message queued');
    assert.deepEqual(busy.messages, ['user: Is the build broken?', 'assistant: Let me look at the build first; it takes a moment.']);
    assert.equal(await hook(page, 'context-usage').getAttribute('data-level'), 'warn');
    await page.screenshot({ path: screenshot });
  }

  await until('agent-status after both prompts', () => status(page), 'idle');
  await until('the messages after both prompts', () => messages(page), [
    'user: Is the build broken?',
    'assistant: Let me look at the build first; it takes a moment.',
    'assistant: The build is fine.',
    'user: and then run the tests',
    'assistant: Then I will run the tests as you asked.',
  ]);
  assert.doesNotMatch(await queue.evaluate((e) => e.textContent), /and then run the tests/);
  assert.deepEqual(await trace(page, 'context-usage'), ['ok', 'warn']);
  const events = await env.events(id, (e) => e.type === 'agent_end');
  assert.deepEqual(
    events.filter((e) => e.type === 'prompt_queued').map((e) => [e.text, e.position]),
    [['and then run the tests', 1]],
  );
  assert.deepEqual(await env.history(id), [
    'user: Is the build broken?',
    'assistant: Let me look at the build first; it takes a moment.',
    'tool: slept 3000 ms',
    'assistant: The build is fine.',
    'user: and then run the tests',
    'assistant: Then I will run the tests as you asked.',
  ]);
});

test('in steer mode a message sent while a tool runs steers the run: the tool is skipped and the next turn sees it', async () => {
  const id = await env.createSession({
    session: 'queue-steer',
    // After its first turn the script answers with the last user text: the
    // steering message, once it is in the context.
    script: {
      turns: [{ text: 'Waiting for the slow job.', tool_calls: [{ name: 'sleep', args: { ms: 30000 } }] }],
      when_exhausted: 'echo',
    },
  });
  const page = await env.openSession(id);
  assert.equal(await checked(page, 'steer-mode'), false);
  await hook(page, 'steer-mode').click();
  await until('steer-mode after a click', () => checked(page, 'steer-mode'), true);

  await send(page, 'wait for the job');
  const card = hook(page, 'tool-call');
  await until('tool card while sleep runs', () => card.getAttribute('data-state'), 'running');
  await send(page, 'stop waiting, use the cache');

  await until('tool card after the steer', () => card.getAttribute('data-state'), 'error');
  await until('the tool card\'s result', () => card.innerText(), (t) => /skipped: a steering message arrived/.test(t));
  await until('agent-status after the steered run', () => status(page), 'idle');
  assert.deepEqual(await trace(page, 'tool-call:c-1'), ['running', 'error']);
  await until('the messages after the steer', () => messages(page), [
    'user: wait for the job',
    'assistant: Waiting for the slow job.',
    'user: stop waiting, use the cache',
    'assistant: stop waiting, use the cache',
  ]);
  assert.equal(await checked(page, 'steer-mode'), true);

  const events = await env.events(id, (e) => e.type === 'agent_end');
  assert.deepEqual(
    events.filter((e) => e.type === 'steering_received').map((e) => [e.text, e.status]),
    [['stop waiting, use the cache', 'accepted']],
  );
  assert.equal(events.filter((e) => e.type === 'steering_applied').length, 1);
  assert.equal(events.at(-1).reason, 'completed');
  assert.deepEqual(await env.history(id), [
    'user: wait for the job',
    'assistant: Waiting for the slow job.',
    'tool: skipped: a steering message arrived',
    'user: stop waiting, use the cache',
    'assistant: stop waiting, use the cache',
  ]);
});
