/**
 * The one HTML page shell and source-text markup every HTML rendering uses
 * (reports, answers, audits), so the Content-Security-Policy that keeps a
 * hostile excerpt inert is written once.
 *
 * @since 0.1.0
 */
import { html as h, visiblePieces } from "./Escape.js"

/**
 * A whole page: no scripts, nothing loaded (`default-src 'none'`), inline
 * styles only, no referrer. `title` is escaped; `style` and `body` must already
 * be markup built from escaped text.
 *
 * @since 0.1.0
 */
export const page = (title: string, style: string, body: string): string => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="referrer" content="no-referrer">
<title>${h(title)}</title>
<style>${style}</style>
</head>
<body>
${body}
</body>
</html>
`

/**
 * Source text as HTML: escaped, with invisible and bidi-control characters
 * shown as `\u{…}` marks (`class="ctl"`).
 *
 * @since 0.1.0
 */
export const sourceText = (s: string): string =>
  visiblePieces(s).map((piece, i) => (i % 2 === 1 ? `<span class="ctl">${h(piece)}</span>` : h(piece))).join("")
