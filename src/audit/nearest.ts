/**
 * Interim nearest-passage search with the interface of `src/anchor/Nearest.ts`
 * (`prepare(text, { from, to })`, `nearestIn(prepared, snippet, { minScore })`),
 * used until that module lands.
 */

export interface Nearest {
  readonly method: string
  readonly score: number
  readonly span: { readonly start: number; readonly end: number }
  readonly text: string
}

/** Longest string compared code unit by code unit; past it, words are compared. */
const maxCharRatio = 2_000

const longestMatch = (
  a: ArrayLike<number>,
  b2j: Map<number, Array<number>>,
  alo: number,
  ahi: number,
  blo: number,
  bhi: number
): [number, number, number] => {
  let besti = alo
  let bestj = blo
  let bestsize = 0
  let j2len = new Map<number, number>()
  for (let i = alo; i < ahi; i++) {
    const next = new Map<number, number>()
    for (const j of b2j.get(a[i]!) ?? []) {
      if (j < blo) continue
      if (j >= bhi) break
      const k = (j2len.get(j - 1) ?? 0) + 1
      next.set(j, k)
      if (k > bestsize) {
        besti = i - k + 1
        bestj = j - k + 1
        bestsize = k
      }
    }
    j2len = next
  }
  return [besti, bestj, bestsize]
}

/** Ratcliff/Obershelp matching characters (difflib's algorithm without junk heuristics), iteratively. */
const matches = (a: ArrayLike<number>, b: ArrayLike<number>): number => {
  const b2j = new Map<number, Array<number>>()
  for (let j = 0; j < b.length; j++) {
    const list = b2j.get(b[j]!)
    if (list === undefined) b2j.set(b[j]!, [j])
    else list.push(j)
  }
  let total = 0
  const stack: Array<[number, number, number, number]> = [[0, a.length, 0, b.length]]
  while (stack.length > 0) {
    const [alo, ahi, blo, bhi] = stack.pop()!
    const [i, j, k] = longestMatch(a, b2j, alo, ahi, blo, bhi)
    if (k === 0) continue
    total += k
    if (alo < i && blo < j) stack.push([alo, i, blo, j])
    if (i + k < ahi && j + k < bhi) stack.push([i + k, ahi, j + k, bhi])
  }
  return total
}

const codes = (s: string) => {
  const out = new Uint16Array(s.length)
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i)
  return out
}

const wordPattern = /[\p{L}\p{N}]+/gu

const wordIds = (s: string, ids: Map<string, number>) => {
  const out: Array<number> = []
  for (const m of s.matchAll(wordPattern)) {
    const w = m[0].toLowerCase()
    let id = ids.get(w)
    if (id === undefined) ids.set(w, id = ids.size)
    out.push(id)
  }
  return out
}

/** 2·M / (|a| + |b|), M the Ratcliff/Obershelp matches; by words when either side is long. */
export const ratio = (a: string, b: string): number => {
  if (a.length + b.length === 0) return 1
  if (a.length <= maxCharRatio && b.length <= maxCharRatio) {
    return (2 * matches(codes(a), codes(b))) / (a.length + b.length)
  }
  const ids = new Map<string, number>()
  const wa = wordIds(a, ids)
  const wb = wordIds(b, ids)
  return wa.length + wb.length === 0 ? 0 : (2 * matches(wa, wb)) / (wa.length + wb.length)
}

/** Candidate windows scored exactly (the best by word overlap, far enough apart). */
const keep = 4

/**
 * The passage of `text[from, to)` most like `snippet`: windows of the
 * snippet's word count slide over the region's words with a running overlap
 * count (linear), the best few are scored with `ratio`. `undefined` when no
 * window scores at least `minScore`, or the region has no words.
 */
export interface Prepared {
  readonly raw: string
  readonly from: number
  readonly to: number
}

export const prepare = (text: string, options: { readonly from?: number | undefined; readonly to?: number | undefined } = {}): Prepared => ({
  raw: text,
  from: Math.max(0, options.from ?? 0),
  to: Math.min(text.length, options.to ?? text.length)
})

export const nearestIn = (
  prepared: Prepared,
  snippet: string,
  options: { readonly minScore?: number | undefined } = {}
): Nearest | undefined => {
  const text = prepared.raw
  const from = prepared.from
  const to = prepared.to
  const minScore = options.minScore ?? 0.6
  if (to <= from) return undefined
  const want = new Map<string, number>()
  let size = 0
  for (const m of snippet.matchAll(wordPattern)) {
    const w = m[0].toLowerCase()
    want.set(w, (want.get(w) ?? 0) + 1)
    size++
  }
  if (size === 0) return undefined
  const starts: Array<number> = []
  const ends: Array<number> = []
  const words: Array<string> = []
  wordPattern.lastIndex = 0
  const region = text.slice(from, to)
  for (const m of region.matchAll(wordPattern)) {
    starts.push(from + m.index)
    ends.push(from + m.index + m[0].length)
    words.push(m[0].toLowerCase())
  }
  if (words.length === 0) return undefined
  const width = Math.min(size, words.length)
  const have = new Map<string, number>()
  let overlap = 0
  const add = (w: string) => {
    const n = have.get(w) ?? 0
    if (n < (want.get(w) ?? 0)) overlap++
    have.set(w, n + 1)
  }
  const drop = (w: string) => {
    const n = have.get(w)! - 1
    have.set(w, n)
    if (n < (want.get(w) ?? 0)) overlap--
  }
  const best: Array<{ first: number; overlap: number }> = []
  const consider = (first: number) => {
    const near = best.findIndex((b) => Math.abs(b.first - first) < width)
    if (near >= 0) {
      if (best[near]!.overlap < overlap) best[near] = { first, overlap }
      return
    }
    if (best.length < keep) best.push({ first, overlap })
    else {
      let worst = 0
      for (let i = 1; i < best.length; i++) if (best[i]!.overlap < best[worst]!.overlap) worst = i
      if (best[worst]!.overlap < overlap) best[worst] = { first, overlap }
    }
  }
  for (let i = 0; i < width; i++) add(words[i]!)
  consider(0)
  for (let first = 1; first + width <= words.length; first++) {
    drop(words[first - 1]!)
    add(words[first + width - 1]!)
    consider(first)
  }
  let result: Nearest | undefined
  for (const b of best) {
    const start = starts[b.first]!
    const end = ends[b.first + width - 1]!
    const candidate = text.slice(start, end)
    const score = ratio(snippet, candidate)
    if (score >= minScore && (result === undefined || score > result.score)) {
      result = { method: snippet.length <= maxCharRatio ? "window+ratio" : "window+word-ratio", score, span: { start, end }, text: candidate }
    }
  }
  return result
}
