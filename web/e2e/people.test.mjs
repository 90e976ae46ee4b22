// People in the loop: an approval approved and one rejected with a reason
// from the buttons, and an ask_user question answered.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { answer, hook, messages, reject, send, setup, status, until } from './harness.mjs';

const env = setup();

const approvalScript = (after) => ({
  turns: [{ text: 'I will echo it.', tool_calls: [{ name: 'echo', args: { text: 'launch codes' } }] }, { text: after }],
});
const approval = [{ name: 'approval', config: { tools: ['echo'] } }];

test('an approval shows the tool and its args; Approve runs the call and the run goes on', async () => {
  const id = await env.createSession({ session: 'people-approve', script: approvalScript('Echoed it.'), plugins: approval });
  const page = await env.openSession(id);
  await send(page, 'echo the codes');

  const box = hook(page, 'approval');
  await box.waitFor();
  const text = await box.innerText();
  assert.match(text, /\becho\b/);
  assert.match(text, /launch codes/);
  const card = hook(page, 'tool-call');
  await until('tool card held for approval', () => card.getAttribute('data-state'), 'waiting');
  // A run waiting for a person is idle: Stop is off, the buttons answer.
  await until('agent-status while the approval waits', () => status(page), 'idle');
  assert.equal(await hook(page, 'stop').isDisabled(), true);

  await hook(page, 'approve').click();
  await until('tool card after Approve', () => card.getAttribute('data-state'), 'ok');
  await box.waitFor({ state: 'hidden' });
  await until('the messages after Approve', () => messages(page), [
    'user: echo the codes',
    'assistant: I will echo it.',
    'assistant: Echoed it.',
  ]);
  await until('agent-status after the run', () => status(page), 'idle');
  assert.deepEqual(await env.history(id), [
    'user: echo the codes',
    'assistant: I will echo it.',
    'tool: launch codes',
    'assistant: Echoed it.',
  ]);
  assert.deepEqual((await env.state(id)).pending_approvals, []);
});

test('Reject with a reason fails the held call with that reason and ends the run', async () => {
  const id = await env.createSession({ session: 'people-reject', script: approvalScript('never said'), plugins: approval });
  const page = await env.openSession(id);
  await send(page, 'echo the codes');
  await hook(page, 'approval').waitFor();
  const card = hook(page, 'tool-call');
  await until('tool card held for approval', () => card.getAttribute('data-state'), 'waiting');

  await reject(page, 'not in this channel');
  await until('tool card after Reject', () => card.getAttribute('data-state'), 'error');
  await until('the tool card\'s result', () => card.innerText(), (t) => /rejected: not in this channel/.test(t));
  await hook(page, 'approval').waitFor({ state: 'hidden' });
  await until('agent-status after Reject', () => status(page), 'idle');
  assert.deepEqual(await messages(page), ['user: echo the codes', 'assistant: I will echo it.']);

  const events = await env.events(id, (e) => e.type === 'agent_end');
  assert.deepEqual(
    events.filter((e) => e.type === 'approval_resolved').map((e) => e.status),
    ['rejected'],
  );
  assert.equal(events.at(-1).reason, 'rejected');
  assert.deepEqual(await env.history(id), [
    'user: echo the codes',
    'assistant: I will echo it.',
    'tool: rejected: not in this channel',
  ]);
});

test('an ask_user question shows its options and the answer goes back as the tool result', async () => {
  const id = await env.createSession({
    session: 'people-question',
    script: {
      turns: [
        { tool_calls: [{ name: 'ask_user', args: { question: 'Deploy where?', options: ['staging', 'production'] } }] },
        { text: 'Deploying as you chose.' },
      ],
    },
    plugins: [{ name: 'ask_user' }],
  });
  const page = await env.openSession(id);
  await send(page, 'deploy it');

  const question = hook(page, 'question');
  await question.waitFor();
  const text = await question.innerText();
  assert.match(text, /Deploy where\?/);
  assert.match(text, /staging/);
  assert.match(text, /production/);
  await until('agent-status while the question waits', () => status(page), 'idle');
  assert.equal(await hook(page, 'stop').isDisabled(), true);

  await answer(page, 'production');
  await question.waitFor({ state: 'hidden' });
  await until('the messages after the answer', () => messages(page), ['user: deploy it', 'assistant: ', 'assistant: Deploying as you chose.']);
  await until('agent-status after the run', () => status(page), 'idle');
  assert.deepEqual(await env.history(id), ['user: deploy it', 'assistant: ', 'tool: production', 'assistant: Deploying as you chose.']);
  const events = await env.events(id, (e) => e.type === 'agent_end');
  assert.deepEqual(
    events.filter((e) => e.type === 'user_responded').map((e) => [e.ref, e.response]),
    [['q-1', 'production']],
  );
});
