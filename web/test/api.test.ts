import assert from "node:assert/strict";
import { test } from "node:test";
import { SseParser } from "../src/api";

test("SSE: messages split across chunks, comments skipped, CRLF and LF", () => {
  const p = new SseParser();
  assert.deepEqual(p.push(": keepalive\n\nid: 14\nevent: message_delta\nda"), []);
  assert.deepEqual(p.push('ta: {"seq":14}\n\nid: 15\r\nevent: agent_end\r\ndata: {"seq":15}\r'), [
    { id: "14", event: "message_delta", data: '{"seq":14}' },
  ]);
  assert.deepEqual(p.push("\n\r\n"), [{ id: "15", event: "agent_end", data: '{"seq":15}' }]);
});

test("SSE: events_lost without an id line, multi-line data", () => {
  const p = new SseParser();
  assert.deepEqual(p.push('event: events_lost\ndata: {"from":1,\ndata: "to":9}\n\n'), [
    { id: null, event: "events_lost", data: '{"from":1,\n"to":9}' },
  ]);
});
