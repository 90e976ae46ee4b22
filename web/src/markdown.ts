// Safe Markdown: markdown-it with raw HTML off (the model's HTML is shown
// as text, never rendered), no images (nothing loads from the network) and
// links only to http, https and mailto.

import MarkdownIt from "markdown-it";

const md = new MarkdownIt({ html: false, linkify: true, breaks: false });
md.disable("image");
md.validateLink = (url: string): boolean => /^(https?:|mailto:)/i.test(url.trim());

const defaultLinkOpen =
  md.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
  tokens[idx].attrSet("target", "_blank");
  tokens[idx].attrSet("rel", "noopener noreferrer nofollow");
  return defaultLinkOpen(tokens, idx, options, env, self);
};

/** The HTML of a Markdown text, safe to put into the page. */
export function renderMarkdown(text: string): string {
  return md.render(text);
}
