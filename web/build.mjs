// Builds the UI into dist/ (index.html, app.js, app.css: fixed names,
// minified, the same bytes for the same sources and lockfile), or, with
// --test, bundles test/*.test.ts for Node and runs them with `node --test`.

import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import * as esbuild from "esbuild";

const root = dirname(fileURLToPath(import.meta.url));
const src = join(root, "src");
const dist = join(root, "dist");
const MAX_GZIP = 100 * 1024;

const common = {
  bundle: true,
  jsx: "automatic",
  jsxImportSource: "preact",
  logLevel: "warning",
  absWorkingDir: root,
};

async function build() {
  rmSync(dist, { recursive: true, force: true });
  mkdirSync(dist, { recursive: true });
  await esbuild.build({
    ...common,
    entryPoints: [join(src, "main.tsx")],
    outfile: join(dist, "app.js"),
    format: "iife",
    platform: "browser",
    target: ["es2020", "chrome100", "firefox100", "safari15"],
    minify: true,
    legalComments: "eof",
    define: { "process.env.NODE_ENV": '"production"' },
  });
  await esbuild.build({
    ...common,
    entryPoints: [join(src, "app.css")],
    outfile: join(dist, "app.css"),
    minify: true,
  });
  copyFileSync(join(src, "index.html"), join(dist, "index.html"));
  let js = 0;
  for (const f of ["index.html", "app.js", "app.css"]) {
    const raw = readFileSync(join(dist, f));
    const gz = gzipSync(raw, { level: 9 }).length;
    if (f === "app.js") js = gz;
    console.log(`dist/${f}: ${raw.length} bytes, ${gz} bytes gzipped`);
  }
  if (js > MAX_GZIP) {
    console.error(`dist/app.js is ${js} bytes gzipped, over the ${MAX_GZIP} byte budget`);
    process.exit(1);
  }
}

async function test() {
  const out = mkdtempSync(join(tmpdir(), "tack-web-test-"));
  try {
    const files = readdirSync(join(root, "test")).filter((f) => f.endsWith(".test.ts")).sort();
    await esbuild.build({
      ...common,
      entryPoints: files.map((f) => join(root, "test", f)),
      outdir: out,
      outExtension: { ".js": ".mjs" },
      format: "esm",
      platform: "node",
      target: "node20",
      sourcemap: "inline",
    });
    const built = files.map((f) => join(out, f.replace(/\.ts$/, ".mjs")));
    const r = spawnSync(process.execPath, ["--test", ...built], { stdio: "inherit" });
    process.exitCode = r.status ?? 1;
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

if (process.argv.includes("--test")) await test();
else await build();
