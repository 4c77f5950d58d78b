/**
 * `pdf/2`'s visibility rule: which stretches of a PDF page's text a reader
 * does not see as text. Two halves:
 *
 * - `walkScript`, evaluated in the extraction worker beside pdf.js: it walks
 *   the page's operator list (`page.getOperatorList()`, annotations left out
 *   as `getTextContent` leaves them out) with a small graphics state (the
 *   transformation matrix, the text matrix, font size, horizontal scale,
 *   render mode, fill and stroke colours and alphas, save/restore, form
 *   XObjects), and gives each text-showing operator one kind (below), with the
 *   text of its glyphs. The areas painted before it (images, filled paths,
 *   shadings) decide what lies beneath it; at most `maxAreas` areas are kept
 *   per page, older ones merged into one box of unknown colour, so each
 *   operator costs a bounded number of checks.
 * - `alignPage` and `pageRuns`, here: the page text (`pdf/1`'s, from
 *   `getTextContent`) is matched character by character against those glyphs
 *   in the same content-stream order, and each hidden stretch becomes a run.
 *
 * The kinds, the first that applies (docs/design.md, `pdf/2`):
 * 1. drawn invisibly (render mode 3 or 7, or a fill alpha of 0 for a filled
 *    mode, a stroke alpha of 0 for a stroked one): `ocr` when the text lies
 *    over an image painted on the page (a scanned page's recognised text: the
 *    reader sees the image), else `invisible`;
 * 2. `tiny`: an effective font size below 1 pt (the size times the vertical
 *    scale of the text and transformation matrices);
 * 3. `offpage`: the text's centre outside the page's visible area (its crop box);
 * 4. `background`: every colour the mode paints with is within 16 of 255 per
 *    channel of the colour beneath the text's centre (the last filled path of
 *    known colour painted there, or the white page when nothing was); text over
 *    an image, a shading or a pattern is taken as visible (its colour is not
 *    known).
 *
 * Not detected (documented in the threat model): text covered by something
 * painted after it, text clipped away, text in the colour of an image beneath.
 */
import type { HiddenKind, HiddenRun } from "../Domain.js"
import { maxHiddenRuns } from "../Domain.js"

/** Most painted areas kept per page for the checks; older ones are merged into one box. */
export const maxAreas = 64

/** The kinds by the codes the worker sends (0 is visible). */
export const kindCodes: ReadonlyArray<HiddenKind | undefined> = [undefined, "ocr", "invisible", "background", "tiny", "offpage"]

/** One text-showing operator: the text of its glyphs and its kind code. */
export type Segment = readonly [text: string, kind: number]

/**
 * The worker half, as source evaluated in the worker: `async function pageSegments(pdfjs, page)`
 * returns the page's segments. Plain JavaScript (the worker runs a script, see Worker.ts).
 */
export const walkScript = `
const pageSegments = async (pdfjs, page) => {
  const OPS = pdfjs.OPS
  const list = await page.getOperatorList({ annotationMode: pdfjs.AnnotationMode.DISABLE })
  const view = page.view
  const [vx0, vy0, vx1, vy1] = [Math.min(view[0], view[2]), Math.min(view[1], view[3]), Math.max(view[0], view[2]), Math.max(view[1], view[3])]
  const compose = (m, n) => [
    m[0] * n[0] + m[1] * n[2], m[0] * n[1] + m[1] * n[3],
    m[2] * n[0] + m[3] * n[2], m[2] * n[1] + m[3] * n[3],
    m[4] * n[0] + m[5] * n[2] + n[4], m[4] * n[1] + m[5] * n[3] + n[5]
  ]
  const apply = (m, x, y) => [m[0] * x + m[2] * y + m[4], m[1] * x + m[3] * y + m[5]]
  const box = (m, x0, y0, x1, y1) => {
    const pts = [apply(m, x0, y0), apply(m, x1, y0), apply(m, x0, y1), apply(m, x1, y1)]
    const xs = pts.map((p) => p[0]), ys = pts.map((p) => p[1])
    return [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)]
  }
  const rgb = (hex) => typeof hex === "string" && /^#[0-9a-f]{6}$/i.test(hex)
    ? [parseInt(hex.slice(1, 3), 16), parseInt(hex.slice(3, 5), 16), parseInt(hex.slice(5, 7), 16)]
    : null
  const close = (a, b) => a !== null && b !== null && Math.abs(a[0] - b[0]) <= 16 && Math.abs(a[1] - b[1]) <= 16 && Math.abs(a[2] - b[2]) <= 16
  const identity = [1, 0, 0, 1, 0, 0]
  let state = { ctm: identity, fill: [0, 0, 0], stroke: [0, 0, 0], fillAlpha: 1, strokeAlpha: 1, mode: 0, size: 0, hscale: 1, charSpacing: 0, wordSpacing: 0, leading: 0, rise: 0 }
  const stack = []
  let tm = identity, tlm = identity
  // Painted areas, in paint order: [x0, y0, x1, y1, colour or null (unknown), isImage]. Past ${maxAreas}, the oldest merge into 'older'.
  const areas = []
  let older = null
  const paint = (b, colour, isImage) => {
    areas.push([b[0], b[1], b[2], b[3], colour, isImage])
    if (areas.length > ${maxAreas}) {
      const o = areas.shift()
      older = older === null ? [o[0], o[1], o[2], o[3], null, o[5]] : [Math.min(older[0], o[0]), Math.min(older[1], o[1]), Math.max(older[2], o[2]), Math.max(older[3], o[3]), null, older[5] || o[5]]
    }
  }
  const inside = (a, x, y) => a !== null && x >= a[0] && x <= a[2] && y >= a[1] && y <= a[3]
  const overImage = (x, y) => areas.some((a) => a[5] && inside(a, x, y)) || (inside(older, x, y) && older[5])
  /** The colour beneath a point: the topmost area holding it (null when unknown), white when none. */
  const beneath = (x, y) => {
    for (let i = areas.length - 1; i >= 0; i--) if (inside(areas[i], x, y)) return areas[i][5] ? null : areas[i][4]
    if (inside(older, x, y)) return null
    return [255, 255, 255]
  }
  const moveText = (x, y) => { tlm = compose([1, 0, 0, 1, x, y], tlm); tm = tlm }
  const fills = new Set([OPS.fill, OPS.eoFill, OPS.fillStroke, OPS.eoFillStroke, OPS.closeFillStroke, OPS.closeEOFillStroke])
  const segments = []
  const { fnArray, argsArray } = list
  for (let i = 0; i < fnArray.length; i++) {
    const fn = fnArray[i], args = argsArray[i]
    switch (fn) {
      case OPS.save: case OPS.beginGroup: stack.push(state); state = { ...state }; break
      case OPS.restore: case OPS.endGroup: case OPS.paintFormXObjectEnd: if (stack.length > 0) state = stack.pop(); break
      case OPS.paintFormXObjectBegin:
        stack.push(state); state = { ...state }
        if (Array.isArray(args[0]) || ArrayBuffer.isView(args[0])) state.ctm = compose(Array.from(args[0]), state.ctm)
        break
      case OPS.transform: state.ctm = compose(args, state.ctm); break
      case OPS.beginText: tm = identity; tlm = identity; break
      case OPS.setFont: state.size = args[1]; break
      case OPS.setTextMatrix: tm = tlm = Array.from(args.length === 6 ? args : args[0]); break
      case OPS.moveText: moveText(args[0], args[1]); break
      case OPS.setLeadingMoveText: state.leading = -args[1]; moveText(args[0], args[1]); break
      case OPS.nextLine: moveText(0, -state.leading); break
      case OPS.setLeading: state.leading = args[0]; break
      case OPS.setHScale: state.hscale = args[0] / 100; break
      case OPS.setCharSpacing: state.charSpacing = args[0]; break
      case OPS.setWordSpacing: state.wordSpacing = args[0]; break
      case OPS.setTextRise: state.rise = args[0]; break
      case OPS.setTextRenderingMode: state.mode = args[0]; break
      case OPS.setFillRGBColor: state.fill = rgb(args[0]); break
      case OPS.setStrokeRGBColor: state.stroke = rgb(args[0]); break
      case OPS.setFillColorN: case OPS.setFillTransparent: state.fill = null; break
      case OPS.setStrokeColorN: case OPS.setStrokeTransparent: state.stroke = null; break
      case OPS.setGState:
        for (const [key, value] of args[0] ?? []) {
          if (key === "ca") state.fillAlpha = value
          else if (key === "CA") state.strokeAlpha = value
        }
        break
      case OPS.constructPath:
        if (fills.has(args[0]) && args[2]) paint(box(state.ctm, args[2][0], args[2][1], args[2][2], args[2][3]), state.fill, false)
        break
      case OPS.paintSolidColorImageMask: paint(box(state.ctm, 0, 0, 1, 1), state.fill, false); break
      case OPS.paintImageXObject: case OPS.paintInlineImageXObject: case OPS.paintImageMaskXObject:
      case OPS.paintImageXObjectRepeat: case OPS.paintImageMaskXObjectRepeat:
      case OPS.paintInlineImageXObjectGroup: case OPS.paintImageMaskXObjectGroup:
        // A repeated or grouped image counts as one image over the page area it may cover.
        paint(fn === OPS.paintImageXObject || fn === OPS.paintInlineImageXObject || fn === OPS.paintImageMaskXObject ? box(state.ctm, 0, 0, 1, 1) : [vx0, vy0, vx1, vy1], null, true)
        break
      case OPS.shadingFill: paint([vx0, vy0, vx1, vy1], null, false); break
      case OPS.showText: {
        const size = state.size, h = state.hscale
        let text = "", tx = 0
        for (const glyph of args[0]) {
          if (typeof glyph === "number") { tx -= glyph * size / 1000 * h; continue }
          if (glyph === null || typeof glyph !== "object") continue
          if (typeof glyph.unicode === "string") text += glyph.unicode
          tx += ((glyph.width || 0) * size / 1000 + state.charSpacing + (glyph.isSpace ? state.wordSpacing : 0)) * h
        }
        const trm = compose(tm, state.ctm)
        const [cx, cy] = apply(trm, tx / 2, state.rise + 0.3 * size)
        const mode = state.mode & 7
        const filled = mode === 0 || mode === 2 || mode === 4 || mode === 6
        const stroked = mode === 1 || mode === 2 || mode === 5 || mode === 6
        const invisible = mode === 3 || mode === 7 || ((!filled || state.fillAlpha === 0) && (!stroked || state.strokeAlpha === 0))
        let kind = 0
        if (invisible) kind = overImage(cx, cy) ? 1 : 2
        else if (Math.abs(size) * Math.hypot(trm[2], trm[3]) < 1) kind = 4
        else if (cx < vx0 || cx > vx1 || cy < vy0 || cy > vy1) kind = 5
        else {
          const under = beneath(cx, cy)
          const colours = [...(filled && state.fillAlpha !== 0 ? [state.fill] : []), ...(stroked && state.strokeAlpha !== 0 ? [state.stroke] : [])]
          if (under !== null && colours.every((c) => close(c, under))) kind = 3
        }
        segments.push([text, kind])
        tm = compose([1, 0, 0, 1, tx, 0], tm)
        break
      }
    }
  }
  return segments
}
`

/** ASCII and Unicode white space, as the page text separates words with it (ASCII decided without a regex). */
const isSpace = (c: string) => {
  const code = c.charCodeAt(0)
  return code < 128 ? code === 32 || (code >= 9 && code <= 13) : /\s/u.test(c)
}

/** NFKC of one character; ASCII is its own. */
const nfkc = (c: string) => (/^[\x00-\x7f]*$/.test(c) ? c : c.normalize("NFKC"))

/** How far ahead in the glyphs a page character is looked for before it is left unmatched. */
const lookAhead = 256

/**
 * Each code unit of the page text's kind code (0 visible), or -1 for white space (decided by its
 * neighbours). The text and the glyphs come from the same operators in the same order; pdf.js
 * adds spaces and line feeds and may normalise (NFKC) a character, so white space is skipped on
 * both sides and each glyph's text is compared in NFKC. A character not found within `lookAhead`
 * glyph characters takes the kind of the glyph where the match stands. Linear: each character
 * costs at most `lookAhead` comparisons.
 */
export const alignPage = (text: string, segments: ReadonlyArray<Segment>): Int8Array => {
  const glyphs: Array<string> = []
  const kinds: Array<number> = []
  for (const [segmentText, kind] of segments) {
    for (const c of nfkc(segmentText)) {
      if (isSpace(c)) continue
      glyphs.push(c)
      kinds.push(kind)
    }
  }
  const out = new Int8Array(text.length)
  let g = 0
  let at = 0
  for (const c of text) {
    const width = c.length
    if (isSpace(c)) {
      out.fill(-1, at, at + width)
      at += width
      continue
    }
    const wanted = nfkc(c)
    let found = -1
    for (let k = g; k < Math.min(glyphs.length, g + lookAhead); k++) {
      if (glyphs[k] === wanted || glyphs[k] === c) {
        found = k
        break
      }
    }
    const kind = found >= 0 ? kinds[found]! : kinds[Math.min(g, kinds.length - 1)] ?? 0
    if (found >= 0) g = found + 1
    out.fill(kind, at, at + width)
    at += width
  }
  return out
}

/**
 * The hidden runs of one page, offset by `offset` (where the page starts in the whole text):
 * maximal stretches of one kind, white space between two characters of the same kind included.
 */
export const pageRuns = (codes: Int8Array, offset: number): Array<HiddenRun> => {
  const runs: Array<HiddenRun> = []
  let start = -1
  let end = -1
  let kind = 0
  const flush = () => {
    if (kind > 0) runs.push([offset + start, offset + end, kindCodes[kind]!])
    kind = 0
  }
  for (let i = 0; i < codes.length; i++) {
    const code = codes[i]!
    if (code < 0) continue
    if (code !== kind) {
      flush()
      kind = code
      start = i
    }
    end = i + 1
  }
  flush()
  return runs
}

/** The kind that marks more: any hidden kind over `ocr` (a run extended past the cap is never under-marked). */
const stronger = (a: HiddenKind, b: HiddenKind): HiddenKind => (a === "ocr" ? b : a)

/**
 * Appends a page's runs to the record's, at most `maxHiddenRuns` in all: past the cap, the last run
 * is extended over every later hidden run (over-marking: the text between is marked too).
 */
export const appendRuns = (all: Array<HiddenRun>, page: ReadonlyArray<HiddenRun>): void => {
  for (const run of page) {
    if (all.length < maxHiddenRuns) {
      all.push(run)
      continue
    }
    const last = all[all.length - 1]!
    all[all.length - 1] = [last[0], run[1], stronger(last[2], run[2])]
  }
}
