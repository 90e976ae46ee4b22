import assert from "node:assert/strict";
import { test } from "node:test";
import { contextLevel, contextText, formatTokens, type ContextUsage } from "../src/format";

const usage = (used: number, window: number | null, percent: number | null, sessionTotal: number): ContextUsage => ({
  used,
  window,
  percent,
  sessionTotal,
});

test("token counts: as written below 1,000, else one decimal and K or M", () => {
  const cases: [number, string][] = [
    [0, "0"],
    [7, "7"],
    [999, "999"],
    [1000, "1.0K"],
    [1049, "1.0K"],
    [1050, "1.1K"],
    [15200, "15.2K"],
    [28500, "28.5K"],
    [28450, "28.5K"],
    [999949, "999.9K"],
    [999950, "1.0M"],
    [1_200_000, "1.2M"],
    [12_345_678, "12.3M"],
  ];
  for (const [n, want] of cases) assert.equal(formatTokens(n), want, `formatTokens(${n})`);
});

test("context text with a known window", () => {
  assert.equal(contextText(usage(608, 8000, 7.6, 28500)), "Context: 7.6% | Session: 28.5K tokens");
  assert.equal(contextText(usage(53, 8000, 0.6625, 138)), "Context: 0.7% | Session: 138 tokens");
  assert.equal(contextText(usage(0, 8000, 0, 0)), "Context: 0.0% | Session: 0 tokens");
});

test("context text with an unknown window", () => {
  assert.equal(contextText(usage(15200, null, null, 28500)), "Context: 15.2K tokens | Session: 28.5K tokens");
  assert.equal(contextLevel(usage(15200, null, null, 28500)), "ok");
});

test("a session with no usage yet shows 0", () => {
  assert.equal(contextText(usage(0, null, null, 0)), "Context: 0 tokens | Session: 0 tokens");
  assert.equal(contextText(usage(0, 8000, null, 0)), "Context: 0.0% | Session: 0 tokens");
});

test("a missing percent is computed from a known window", () => {
  assert.equal(contextText(usage(2400, 8000, null, 2400)), "Context: 30.0% | Session: 2.4K tokens");
});

test("levels at 30, 60 and 90 percent and at the edges", () => {
  const cases: [number, string, string][] = [
    [30, "Context: 30.0% | Session: 2.4K tokens", "ok"],
    [49.9, "Context: 49.9% | Session: 2.4K tokens", "ok"],
    [49.96, "Context: 50.0% | Session: 2.4K tokens", "warn"],
    [50, "Context: 50.0% | Session: 2.4K tokens", "warn"],
    [60, "Context: 60.0% | Session: 2.4K tokens", "warn"],
    [80, "Context: 80.0% | Session: 2.4K tokens", "warn"],
    [80.04, "Context: 80.0% | Session: 2.4K tokens", "warn"],
    [80.1, "Context: 80.1% | Session: 2.4K tokens", "high"],
    [90, "Context: 90.0% | Session: 2.4K tokens", "high"],
  ];
  for (const [p, text, level] of cases) {
    const u = usage(Math.round(p * 80), 8000, p, 2400);
    assert.equal(contextText(u), text, `text at ${p}%`);
    assert.equal(contextLevel(u), level, `level at ${p}%`);
  }
});
