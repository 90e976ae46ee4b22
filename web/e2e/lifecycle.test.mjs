// A session's life in the page: images pasted or dropped into the
// composer reach the model with the prompt and show in the conversation;
// a session is deleted from the list after a confirmation.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hook, setup, until } from './harness.mjs';

const env = setup();

// A tiny PNG: its signature and a few bytes, as base64.
const PNG = Buffer.concat([Buffer.from('\x89PNG\r\n\x1a\n', 'latin1'), Buffer.alloc(24)]).toString('base64');
const PNG_URL = `data:image/png;base64,${PNG}`;
// Each request is answered with a report of what the model received.
const REPORT = { turns: [{ report: true }], when_exhausted: 'repeat_last' };

/** Hands the page's element at selector a file event (paste or drop) with one PNG. */
function giveImage(page, selector, kind) {
  return page.evaluate(
    ({ selector, kind, png }) => {
      const bytes = Uint8Array.from(atob(png), (c) => c.charCodeAt(0));
      const dt = new DataTransfer();
      dt.items.add(new File([bytes], 'pixel.png', { type: 'image/png' }));
      const el = document.querySelector(selector);
      const ev = kind === 'paste' ? new ClipboardEvent('paste', { clipboardData: dt, bubbles: true, cancelable: true })
        : new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true });
      el.dispatchEvent(ev);
    },
    { selector, kind, png: PNG },
  );
}

for (const kind of ['paste', 'drop']) {
  test(`an image ${kind === 'paste' ? 'pasted into' : 'dropped on'} the composer goes with the prompt to the model and shows in the conversation`, async () => {
    const id = await env.createSession({ session: `img-${kind}`, script: REPORT });
    const page = await env.openSession(id);
    await giveImage(page, kind === 'paste' ? '[data-testid="prompt-input"]' : '.composer', kind);
    await until('one attachment', () => hook(page, 'attachment').count(), 1);
    await hook(page, 'prompt-input').fill('what is this?');
    await hook(page, 'send').click();
    await until('the attachment is sent', () => hook(page, 'attachment').count(), 0);
    await until('the image in the user message', () => hook(page, 'message-image').count(), 1);
    assert.equal(await hook(page, 'message-image').getAttribute('src'), PNG_URL);
    // The model's report: what the request held.
    const res = await until(
      'the model answered',
      async () => (await env.api('GET', `/v1/sessions/${id}/messages`)).body.messages,
      (msgs) => msgs.length === 2,
    );
    assert.deepEqual(res[0], { role: 'user', content: 'what is this?', images: [{ url: PNG_URL }] });
    assert.deepEqual(JSON.parse(res[1].content), { message_count: 1, images: [{ url: PNG_URL }] });
  });
}

test('a session is deleted from the list only once the delete is confirmed', async () => {
  const keep = await env.createSession({ session: 'del-keep', script: REPORT });
  const gone = await env.createSession({ session: 'del-gone', script: REPORT });
  const page = await env.openSession(gone);
  const item = (id) => page.locator(`[data-testid="session-item"][data-session="${id}"]`);
  await item(gone).waitFor();
  await page.locator(`[data-testid="session-delete"][data-session="${gone}"]`).click();
  await hook(page, 'session-delete-cancel').click();
  assert.equal(await item(gone).count(), 1);
  assert.equal((await env.api('GET', `/v1/sessions/${gone}`)).status, 200);

  await page.locator(`[data-testid="session-delete"][data-session="${gone}"]`).click();
  await page.locator(`[data-testid="session-delete-confirm"][data-session="${gone}"]`).click();
  await until('the session leaves the list', () => item(gone).count(), 0);
  assert.equal(await item(keep).count(), 1);
  assert.equal((await env.api('GET', `/v1/sessions/${gone}`)).status, 404);
  // It was open: the page shows no session now.
  await until('no session open', () => page.evaluate(() => location.search), '');
  assert.equal(await hook(page, 'message').count(), 0);
});
