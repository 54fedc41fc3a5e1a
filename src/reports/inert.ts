/**
 * Text from servers, models and the corpus is data: before it reaches a terminal or a markdown
 * digest it is made inert. One helper for every output, so no path forgets it.
 */

/**
 * Terminal-inert text: every C0 control except tab and newline (ESC, so CSI and OSC sequences
 * too; a lone CR, which would overwrite the line), DEL and the C1 controls become visible
 * stand-ins (U+2400 control pictures, U+FFFD for C1). CRLF becomes LF.
 */
export function inertText(text: string): string {
  return text.replace(/\r\n/g, '\n').replace(/[\u0000-\u0008\u000B-\u001F\u007F\u0080-\u009F]/g, (ch) => {
    const code = ch.charCodeAt(0);
    if (code < 0x20) return String.fromCharCode(0x2400 + code);
    return code === 0x7f ? '\u2421' : '\uFFFD';
  });
}

/**
 * Markdown-inert text: terminal-inert, raw HTML shown as text (`<`, `>`, `&` as entities), and
 * inline links broken (`](` → `]\(`) so a `javascript:` link in an answer is never clickable.
 */
export function markdownText(text: string): string {
  return (
    inertText(text)
      .replace(/[&<>]/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' })[ch]!)
      // CommonMark allows no space between `]` and `(` of an inline link: only `](` needs breaking.
      .replace(/\]\(/g, ']\\(')
  );
}
