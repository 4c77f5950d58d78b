/**
 * The captured sources of a verified answer's HTML page: each capture's text with every verified
 * quote's span highlighted, as the report page shows them (render/Html.ts `highlightedCapture`).
 * Footnote k's link opens its span (`#fn-k-excerpt`), outlined when targeted; each highlight links
 * back to its footnote.
 *
 * @since 0.5.0
 */
import { type CaptureRecord, captureFormat, recordBody } from "../Domain.js"
import { html as h } from "../render/Escape.js"
import { highlightedCapture, type HighlightNames } from "../render/Html.js"
import type { VerifiedAnswer } from "./Records.js"

const footnoteNames: HighlightNames = {
  anchor: (n) => `fn-${n}-excerpt`,
  item: (n) => `fn-${n}`,
  title: (ns) => `footnote ${ns.join(", ")}`
}

/** Footnote numbers, sources and spans of every verified citation, numbered from 1 in claim order. */
const spansOf = (answer: VerifiedAnswer) => {
  let n = 0
  return answer.claims.flatMap((claim) =>
    claim.citations.map(({ citation, evidence }) => ({ n: ++n, source: citation.source, start: evidence.span.start, end: evidence.span.end }))
  )
}

/** The sources cited, in order of first citation: `[k]` in the footnotes. */
export const sourcesOf = (answer: VerifiedAnswer): ReadonlyArray<string> => [...new Set(spansOf(answer).map((s) => s.source))]

/** The "Captured sources" section (empty when nothing was verified) and the CSS that outlines a targeted quote. */
export const capturedSources = (answer: VerifiedAnswer, captures: ReadonlyMap<string, CaptureRecord>) => {
  const spans = spansOf(answer)
  const sources = sourcesOf(answer)
  if (sources.length === 0) return { html: "", style: "" }
  const parts = ["<h2>Captured sources</h2>"]
  sources.forEach((source, i) => {
    const record = captures.get(source)
    const own = spans.filter((s) => s.source === source).map((s) => ({ index: s.n, start: s.start, end: s.end }))
    parts.push(`<section class="capture" id="capture-${i + 1}">
<h3>[${i + 1}] <code>${h(source)}</code></h3>
${record === undefined
  ? "<p>Capture text not available to this renderer.</p>"
  : `<p class="citation">sha256 <code>${h(record.sha256)}</code> · accessed ${h(record.accessedAt)} · ${recordBody(record).byteLength} bytes · ${h(recordBody(record).contentType)}</p>
<pre>${highlightedCapture(record.text, own, record.format === captureFormat ? [] : record.pages ?? [], i + 1, footnoteNames)}</pre>`}
</section>`)
  })
  const style = `
.capture pre { white-space: pre-wrap; word-break: break-word; background: #fafafa; border: 1px solid #ddd; padding: 1rem; max-height: 30rem; overflow: auto; }
mark { background: #ffe066; }
mark a { color: inherit; text-decoration: none; }
.ctl { color: #c92a2a; font-size: 0.85em; }
.page-marker { display: block; border-top: 1px dashed #999; color: #666; font: 12px system-ui, sans-serif; user-select: none; }
.page-marker::before { content: "page " attr(data-page); }
${spans.map((s) => `#fn-${s.n}-excerpt:target ~ mark[data-facts~="${s.n}"] { background: #ffb347; outline: 2px solid #d9480f; }`).join("\n")}
`
  return { html: parts.join("\n"), style }
}
