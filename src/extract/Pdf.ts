/**
 * `pdf/1`: the text of each page, as pdf.js (pdfjs-dist's legacy build, the
 * exact version pinned) returns its text items in content-stream order, a line
 * feed after each item that ends a line; pages joined by one form feed
 * (U+000C). A form feed inside a page's own text becomes a space, so form
 * feeds separate pages and nothing else. Each page is an anchor.
 *
 * Checked before pdf.js sees the file: a `%PDF-` header in the first KiB and
 * an `%%EOF` marker in the last KiB (pdf.js would silently repair a truncated
 * file; a capture does not). Encrypted files are refused, even those that open
 * with an empty password: their text is not the bytes the server sent.
 */
import * as Effect from "effect/Effect"
import type { PageAnchor } from "../Domain.js"
import { ExtractionFailed, ExtractionTooLarge } from "../Errors.js"
import type { Extracted, ExtractionLimits } from "./Records.js"
import { decodedLimit, withinDecodedLimit } from "./PdfStreams.js"
import { pdfPages } from "./Worker.js"

const window = 1024

const includes = (bytes: Uint8Array, from: number, to: number, marker: string) =>
  Buffer.from(bytes.buffer, bytes.byteOffset + from, Math.max(0, to - from)).includes(marker, 0, "latin1")

export const extract = (
  source: string,
  body: Uint8Array,
  limits: ExtractionLimits
): Effect.Effect<Extracted, ExtractionFailed | ExtractionTooLarge> =>
  Effect.gen(function*() {
    const fail = (reason: ExtractionFailed["reason"], detail: string) =>
      new ExtractionFailed({ source, format: "pdf", reason, detail })
    if (!includes(body, 0, Math.min(window, body.byteLength), "%PDF-")) {
      return yield* fail("malformed", "no %PDF- header in the first 1024 bytes")
    }
    if (!includes(body, Math.max(0, body.byteLength - window), body.byteLength, "%%EOF")) {
      return yield* fail("truncated", "no %%EOF marker in the last 1024 bytes")
    }
    // Decompression bombs: what the streams decode to is counted (and capped) before pdf.js decodes any.
    const decoded = decodedLimit(body.byteLength)
    if (!(yield* Effect.promise(() => withinDecodedLimit(body, decoded)))) {
      return yield* new ExtractionTooLarge({ source, format: "pdf", cap: "decodedBytes", limit: decoded })
    }
    const outcome = yield* pdfPages(body, limits).pipe(Effect.mapError((failure) => fail("worker-failed", failure.detail)))
    switch (outcome._tag) {
      case "encrypted":
        return yield* fail("encrypted", outcome.detail)
      case "malformed":
        return yield* fail("malformed", outcome.detail)
      case "tooManyPages":
        return yield* new ExtractionTooLarge({ source, format: "pdf", cap: "maxPages", limit: limits.maxPages })
      case "tooManyCharacters":
        return yield* new ExtractionTooLarge({ source, format: "pdf", cap: "maxCharacters", limit: limits.maxCharacters })
    }
    const pages: Array<PageAnchor> = []
    const parts: Array<string> = []
    let at = 0
    outcome.pages.forEach((raw, i) => {
      // Well-formed text only (a lone surrogate from a broken font map becomes U+FFFD), no form feed but between pages.
      const text = raw.toWellFormed().replaceAll("\f", " ")
      if (i > 0) {
        parts.push("\f")
        at += 1
      }
      pages.push({ number: i + 1, start: at, end: at + text.length })
      parts.push(text)
      at += text.length
    })
    return { extraction: "pdf/1", text: parts.join(""), pages } satisfies Extracted
  })
