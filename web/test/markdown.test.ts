import assert from "node:assert/strict";
import { test } from "node:test";
import { renderMarkdown } from "../src/markdown";

test("raw HTML from the model is escaped, never rendered", () => {
  const html = renderMarkdown('hi <script>alert(1)</script> <img src=x onerror="alert(2)">');
  assert.equal(html, "<p>hi &lt;script&gt;alert(1)&lt;/script&gt; &lt;img src=x onerror=&quot;alert(2)&quot;&gt;</p>\n");
});

test("links only to http, https and mailto; they open in a new tab", () => {
  assert.equal(renderMarkdown("[x](javascript:alert(1))"), "<p>[x](javascript:alert(1))</p>\n");
  assert.equal(renderMarkdown("[x](data:text/html,hi)"), "<p>[x](data:text/html,hi)</p>\n");
  assert.equal(
    renderMarkdown("[docs](https://example.com/a)"),
    '<p><a href="https://example.com/a" target="_blank" rel="noopener noreferrer nofollow">docs</a></p>\n',
  );
  assert.equal(
    renderMarkdown("<mailto:a@example.com>"),
    '<p><a href="mailto:a@example.com" target="_blank" rel="noopener noreferrer nofollow">mailto:a@example.com</a></p>\n',
  );
});

test("images are not loaded (a link instead); code blocks and lists render", () => {
  assert.equal(
    renderMarkdown("![t](https://example.com/t.png)"),
    '<p>!<a href="https://example.com/t.png" target="_blank" rel="noopener noreferrer nofollow">t</a></p>\n',
  );
  assert.equal(renderMarkdown("```go\nfmt.Println(1 < 2)\n```"), '<pre><code class="language-go">fmt.Println(1 &lt; 2)\n</code></pre>\n');
  assert.equal(renderMarkdown("- a\n- b"), "<ul>\n<li>a</li>\n<li>b</li>\n</ul>\n");
});
