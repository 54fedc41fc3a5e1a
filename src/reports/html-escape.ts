/**
 * The one escaping home of the HTML report. Every text that comes from the corpus, the cases,
 * the model or the config goes through `esc` (content and attribute values alike); data for the
 * page's script goes through `jsonScript`; links through `safeHref`.
 */

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for HTML content and double- or single-quoted attribute values. */
export function esc(value: unknown): string {
  return String(value ?? '').replace(/[&<>"']/g, (ch) => ENTITIES[ch]!);
}

/**
 * A `<script type="application/json">` element carrying `data`. `<` (so no `</script>` or
 * `<!--` can end or confuse the element), `>`, `&` and the JavaScript line separators are
 * written as \u escapes, which JSON.parse reads back unchanged.
 */
export function jsonScript(id: string, data: unknown): string {
  const json = JSON.stringify(data)
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
  return `<script type="application/json" id="${esc(id)}">${json}</script>`;
}

/** An http(s) URL as an attribute value, or null (javascript:, data: and the like are never linked). */
export function safeHref(url: string): string | null {
  return /^https?:\/\//i.test(url.trim()) ? esc(url.trim()) : null;
}
