// A run as the page shows it: the status, a streaming message, tool cards,
// and Stop.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hook, messageText, messages, send, setup, status, trace, until } from './harness.mjs';

const env = setup();

test('status goes thinking, then tool_calling naming the tool, then idle; the tool card goes running then ok', async () => {
  const id = await env.createSession({
    session: 'run-status',
    script: {
      turns: [
        { delay_ms: 400, text: 'Let me sleep.', tool_calls: [{ name: 'sleep', args: { ms: 800 } }] },
        { delay_ms: 400, text: 'Slept well.' },
      ],
    },
  });
  const page = await env.openSession(id);
  assert.equal(await status(page), 'idle');
  assert.equal(await hook(page, 'tool-call').count(), 0);

  await send(page, 'sleep a little');
  // The recorder saw every state, so a slow poll misses none.
  await until('the states agent-status went through', () => trace(page, 'agent-status'), ['idle', 'thinking', 'tool_calling', 'thinking', 'idle']);
  await until('the states of the tool card', () => trace(page, 'tool-call:c-1'), ['running', 'ok']);
  // While tool_calling (and only then) the text names the tool.
  const texts = await trace(page, 'agent-status text');
  assert.ok(texts.some((t) => t.startsWith('tool_calling: ')), texts.join(' | '));
  for (const t of texts) {
    if (t.startsWith('tool_calling: ')) assert.match(t, /\bsleep\b/);
    else assert.doesNotMatch(t, /\bsleep\b/);
  }
  assert.equal(await status(page), 'idle');
  assert.equal(await hook(page, 'tool-call').getAttribute('data-call-id'), 'c-1');
  assert.deepEqual(await messages(page), ['user: sleep a little', 'assistant: Let me sleep.', 'assistant: Slept well.']);
  assert.deepEqual(await env.history(id), [
    'user: sleep a little',
    'assistant: Let me sleep.',
    'tool: slept 800 ms',
    'assistant: Slept well.',
  ]);
});

test('an assistant message grows in place while it streams and ends with the exact text', async () => {
  const text = 'The quick brown fox jumps over the lazy dog, then naps in the warm afternoon sun.';
  const id = await env.createSession({
    session: 'run-stream',
    script: { turns: [{ delay_ms: 200, text, chunk_size: 3, chunk_delay_ms: 60 }] },
  });
  const page = await env.openSession(id);
  await send(page, 'tell me about the fox');

  const reply = hook(page, 'message').nth(1);
  const first = await until('streamed text so far', () => messageText(reply), (t) => t.length > 0 && t.length < text.length);
  assert.ok(text.startsWith(first), `${JSON.stringify(first)} is not a prefix of the script's text`);
  const streaming = await reply.elementHandle();
  const second = await until('streamed text later', () => messageText(reply), (t) => t.length > first.length);
  assert.ok(text.startsWith(second), `${JSON.stringify(second)} is not a prefix of the script's text`);

  await until('the reply when the run ended', () => messageText(reply), text);
  await until('agent-status after the run', () => status(page), 'idle');
  assert.equal(await streaming.evaluate((e) => e.isConnected), true, 'the streaming message was replaced, not grown in place');
  assert.equal(await streaming.evaluate((e) => window.__tackText(e)), text);
  assert.deepEqual(await messages(page), ['user: tell me about the fox', `assistant: ${text}`]);
});

test('Stop is disabled when idle, enabled while a tool runs, and aborts the run: the card ends error, the text stays', async () => {
  const id = await env.createSession({
    session: 'run-stop-tool',
    script: {
      turns: [
        { text: 'Sleeping for a long while.', tool_calls: [{ name: 'sleep', args: { ms: 60000 } }] },
        { text: 'never said' },
      ],
    },
  });
  const page = await env.openSession(id);
  const stop = hook(page, 'stop');
  assert.equal(await stop.isDisabled(), true);

  await send(page, 'sleep for a minute');
  const card = hook(page, 'tool-call');
  await until('tool card while sleep runs', () => card.getAttribute('data-state'), 'running');
  assert.equal(await stop.isEnabled(), true);

  await stop.click();
  await until('tool card after Stop', () => card.getAttribute('data-state'), 'error');
  await until('the tool card\'s result', () => card.innerText(), (t) => /interrupted: aborted by user/.test(t));
  await until('agent-status after Stop', () => status(page), 'idle');
  await until('Stop after the run ended', () => stop.isDisabled(), true);
  assert.deepEqual(await trace(page, 'tool-call:c-1'), ['running', 'error']);
  assert.deepEqual(await messages(page), ['user: sleep for a minute', 'assistant: Sleeping for a long while.']);

  const ends = await env.events(id, (e) => e.type === 'agent_end');
  assert.equal(ends.at(-1).reason, 'aborted');
  assert.equal((await env.state(id)).state, 'idle');
  assert.deepEqual(await env.history(id), [
    'user: sleep for a minute',
    'assistant: Sleeping for a long while.',
    'tool: interrupted: aborted by user',
  ]);
});

test('Stop in the middle of a stream keeps the text rendered so far', async () => {
  const text =
    'This answer streams slowly on purpose so that it can be stopped half way, and the part already shown must stay on the screen.';
  const id = await env.createSession({
    session: 'run-stop-stream',
    script: { turns: [{ text, chunk_size: 2, chunk_delay_ms: 50 }] },
  });
  const page = await env.openSession(id);
  await send(page, 'stream something long');
  const reply = hook(page, 'message').nth(1);
  const before = await until('streamed text before Stop', () => messageText(reply), (t) => t.length >= 20);
  await until('Stop while streaming', () => hook(page, 'stop').isEnabled(), true);

  await hook(page, 'stop').click();
  await until('agent-status after Stop', () => status(page), 'idle');
  const history = await env.history(id);
  assert.equal(history.length, 2);
  const committed = history[1].replace(/^assistant: /, '');
  assert.ok(committed.endsWith('\n\n[interrupted]'), `committed text ${JSON.stringify(committed)}`);
  const partial = committed.slice(0, -'\n\n[interrupted]'.length);
  assert.ok(partial.startsWith(before) && text.startsWith(partial), `partial ${JSON.stringify(partial)}`);
  const shown = await until('the reply after Stop', () => messageText(reply), (t) => t.startsWith(partial.replace(/\s+/g, ' ')));
  assert.ok(shown.length < text.length, `the page shows more than was streamed: ${JSON.stringify(shown)}`);
  assert.equal(await hook(page, 'message').count(), 2);
});
