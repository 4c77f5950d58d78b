/**
 * Capture signatures in renderings (`verify.signatures: "check"`): the captures whose signed
 * attestation does not hold, in their own section right after provenance, never inside a fact's
 * verified excerpt. Under `check` their facts were still verified for provenance: the section says
 * what the signatures could not vouch for. Pure; every value (sources, key ids, details) is escaped
 * for its format. JSON carries the `signatureNotes` array instead.
 *
 * @since 0.3.0
 */
import type { CaptureSignatureError } from "../Errors.js"
import * as Describe from "./Describe.js"
import { html as h, markdown as md, terminal } from "./Escape.js"
import { withSection } from "./Section.js"

const title = "Capture signatures (verify.signatures: check)"

const intro = (n: number) =>
  `${n} capture${n === 1 ? "" : "s"} whose signed attestation does not hold. Their facts were verified for ` +
  "provenance against the bytes stored, but who captured those bytes is not attested: under \"require\" they would be refused."

export const text = (notes: ReadonlyArray<CaptureSignatureError>): string =>
  [
    "",
    `${title}:`,
    `  ${intro(notes.length)}`,
    ...notes.flatMap((note) => {
      const d = Describe.captureSignatureError(note)
      return [
        `  ${note._tag}: ${d.title}`,
        ...d.fields.map(([name, value]) => `    ${name}: ${terminal(value)}`),
        `    fix: ${d.fix}`
      ]
    })
  ].join("\n") + "\n"

export const markdown = (notes: ReadonlyArray<CaptureSignatureError>): string =>
  [
    "",
    `## ${md(title)}`,
    "",
    `*${md(intro(notes.length))}*`,
    "",
    ...notes.map((note) => {
      const d = Describe.captureSignatureError(note)
      return `- \`${note._tag}\`: ${md(d.title)}; ${d.fields.map(([name, value]) => `${md(name)}: ${md(value)}`).join("; ")}. ` +
        `What to do: ${md(d.fix)}`
    }),
    ""
  ].join("\n")

export const html = (notes: ReadonlyArray<CaptureSignatureError>): string =>
  [
    `<section class="signature-notes" id="signature-notes">`,
    `<h2>${h(title)}</h2>`,
    `<p class="note">${h(intro(notes.length))}</p>`,
    "<ul>",
    ...notes.map((note) => {
      const d = Describe.captureSignatureError(note)
      return `<li data-tag="${h(note._tag)}"><code>${h(note._tag)}</code>: ${h(d.title)}<ul>` +
        d.fields.map(([name, value]) => `<li>${h(name)}: <code class="value">${h(terminal(value))}</code></li>`).join("") +
        `</ul><div>What to do: ${h(d.fix)}</div></li>`
    }),
    "</ul>",
    "</section>"
  ].join("\n")

/**
 * A page with the section added: after text and Markdown, before `</body>` in HTML; unchanged without
 * notes and for JSON and JSON-LD, whose value carries the `signatureNotes` array (text appended to
 * them would no longer parse).
 */
export const withSignatureNotes = (
  format: string,
  page: string,
  notes: ReadonlyArray<CaptureSignatureError> | undefined
): string => {
  if (notes === undefined || notes.length === 0 || format === "json" || format === "jsonld") return page
  return withSection(format, page, notes, { html, markdown, text })
}
