import { useMemo } from "preact/hooks";
import { renderMarkdown } from "../markdown";

/** Markdown text rendered safely (see markdown.ts). */
export function Markdown({ text }: { text: string }) {
  const html = useMemo(() => renderMarkdown(text), [text]);
  return <div class="md" dangerouslySetInnerHTML={{ __html: html }} />;
}
