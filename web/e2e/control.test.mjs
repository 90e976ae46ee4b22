// Issue 15/16 features as the page shows them: a sub-agent's work nested in
// its subagent card, and edit and resend (a rollback) followed by a fork.

import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { hook, messages, send, setup, status, until } from './harness.mjs';

const env = setup();

test('a subagent call shows the child session, its description, its tool calls and its result, folded once done', async () => {
  // The child's model is a script file, read from the server's --script-dir.
  await writeFile(
    path.join(env.server.dir, 'child.json'),
    JSON.stringify({
      turns: [
        { delay_ms: 200, text: 'Counting.', tool_calls: [{ name: 'sleep', args: { ms: 700 } }] },
        { text: 'There are 42 files.' },
      ],
    }),
  );
  const id = await env.createSession({
    session: 'ctl-sub',
    script: {
      turns: [
        { text: '<title>File count</title>', tool_calls: [{ name: 'subagent', args: { task: 'Count the files.', description: 'count files' } }] },
        { text: 'The sub-agent says 42.' },
      ],
    },
    tools: ['subagent'],
    subagents: { model: 'script:child.json' },
  });
  const page = await env.openSession(id);
  await send(page, 'How many files?');

  const sub = hook(page, 'subagent');
  await until('the child\'s sleep call while it runs', () => hook(page, 'subagent-tool').evaluateAll((els) => els.map((e) => `${e.dataset.name}: ${e.dataset.state}`)), ['sleep: running']);
  assert.equal(await sub.getAttribute('data-child'), 'ctl-sub/sub-1');
  assert.equal(await sub.getAttribute('data-state'), 'running');
  assert.equal(await sub.evaluate((e) => e.open), true);
  assert.match(await sub.innerText(), /ctl-sub\/sub-1\s+count files/);
  assert.match(await sub.innerText(), /Counting\./);
  // The title the model wrote names the session in the list.
  await until('the session\'s title in the list', () => page.locator(`[data-testid="session-item"][data-session="${id}"] .session-title`).textContent(), 'File count');

  await until('agent-status after the run', () => status(page), 'idle');
  assert.equal(await sub.getAttribute('data-state'), 'done');
  assert.equal(await sub.evaluate((e) => e.open), false, 'the finished sub-agent is folded');
  assert.equal(await hook(page, 'subagent-result').textContent(), 'There are 42 files.');
  assert.deepEqual(await hook(page, 'subagent-tool').evaluateAll((els) => els.map((e) => `${e.dataset.name}: ${e.dataset.state}`)), ['sleep: ok']);
  // The child's calls are no tool cards of the page's own.
  assert.deepEqual(await hook(page, 'tool-call').evaluateAll((els) => els.map((e) => `${e.dataset.callId}: ${e.dataset.state}`)), ['c-1: ok']);
  assert.deepEqual(await messages(page), ['user: How many files?', 'assistant: ', 'assistant: The sub-agent says 42.']);
});

test('edit and resend rolls the run back: the typo and its answer leave the page; fork from the answer opens the fork', async () => {
  const id = await env.createSession({
    session: 'ctl-rollback',
    script: { turns: [{ text: 'Sleeping.', tool_calls: [{ name: 'sleep', args: { ms: 60000 } }] }, { text: 'Paris.' }] },
  });
  const page = await env.openSession(id);
  assert.equal(await hook(page, 'edit-prompt').count(), 0);
  await send(page, 'capitol of France?');
  await until('the tool card while sleep runs', () => hook(page, 'tool-call').getAttribute('data-state'), 'running');

  await hook(page, 'edit-prompt').click();
  assert.equal(await hook(page, 'edit-input').inputValue(), 'capitol of France?');
  await hook(page, 'edit-input').fill('capital of France?');
  await hook(page, 'edit-send').click();
  await until('the messages after the resend', () => messages(page), ['user: capital of France?', 'assistant: Paris.']);
  await until('agent-status after the run', () => status(page), 'idle');
  assert.equal(await hook(page, 'tool-call').count(), 0);
  assert.equal(await hook(page, 'edit-prompt').count(), 0, 'no edit once the run is over');
  assert.deepEqual(await env.history(id), ['user: capital of France?', 'assistant: Paris.']);
  const all = await env.api('GET', `/v1/sessions/${id}/messages?all=true`);
  assert.deepEqual(all.body.messages.map((m) => `${m.role}: ${m.content}${m.rolled_back ? ' (rolled back)' : ''}`), [
    'user: capitol of France? (rolled back)',
    'assistant: Sleeping. (rolled back)',
    'tool: interrupted: aborted by user (rolled back)',
    'user: capital of France?',
    'assistant: Paris.',
  ]);

  const fork = hook(page, 'fork').nth(1);
  assert.equal(await fork.getAttribute('data-index'), '2');
  await fork.click();
  const forked = await until('the URL of the fork', () => new URL(page.url()).searchParams.get('session'), (s) => s !== null && s !== id);
  await until('the fork\'s messages', () => messages(page), ['user: capital of France?', 'assistant: Paris.']);
  assert.deepEqual(await env.history(forked), ['user: capital of France?', 'assistant: Paris.']);
});
