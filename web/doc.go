// Package web is Tack's browser UI: its TypeScript source (src/, built with
// esbuild from the lockfile by `npm run build`) and the built page in
// dist/, committed and embedded here so that `tack serve` serves it at `/`
// without Node. See docs/web.md.
package web
