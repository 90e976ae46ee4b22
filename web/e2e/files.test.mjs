// The workspace's files in the page: a file attached with the picker or
// dropped on the panel lands in the session's workspace, where the agent
// reads it; a file the agent wrote is listed and downloads.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { hook, send, setup, status, until } from './harness.mjs';

const env = setup();

/** The paths the files panel lists. */
const listed = (page) => hook(page, 'file-item').evaluateAll((els) => els.map((e) => e.dataset.path));

test('attach and drop files into the workspace; the agent reads them; what it writes downloads', async () => {
  const id = await env.createSession({
    session: 'files',
    script: {
      turns: [
        { tool_calls: [{ name: 'shell', args: { command: 'cat notes.txt dropped.txt && echo made by the agent > out.txt' } }] },
        { text: 'Read and wrote.' },
      ],
    },
  });
  const page = await env.openSession(id);
  await hook(page, 'files').locator('summary').click();
  assert.deepEqual(await listed(page), []);

  await hook(page, 'file-upload').setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('from the picker\n') });
  await until('the attached file listed', () => listed(page), ['notes.txt']);

  const dt = await page.evaluateHandle(() => {
    const d = new DataTransfer();
    d.items.add(new File(['from a drop\n'], 'dropped.txt', { type: 'text/plain' }));
    return d;
  });
  await hook(page, 'files').dispatchEvent('drop', { dataTransfer: dt });
  await until('the dropped file listed', () => listed(page), ['dropped.txt', 'notes.txt']);

  await send(page, 'read my notes');
  await until('the run ends', () => status(page), 'idle');
  await until('the agent\'s file listed', () => listed(page), ['dropped.txt', 'notes.txt', 'out.txt']);
  const history = await env.history(id);
  assert.equal(history[2], 'tool: from the picker\nfrom a drop\n');

  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.locator('[data-testid="file-item"][data-path="out.txt"] [data-testid="file-download"]').click(),
  ]);
  assert.equal(download.suggestedFilename(), 'out.txt');
  assert.equal(await readFile(await download.path(), 'utf8'), 'made by the agent\n');
});
