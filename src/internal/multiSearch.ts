/**
 * Exact search of many snippets in one text: for each snippet, the first
 * occurrence and the number of (possibly overlapping) occurrences, by exact
 * UTF-16 code-unit equality.
 *
 * One `indexOf` per snippet costs snippets x text length. When many snippets
 * cite one large capture, a single Rabin-Karp pass keyed on each snippet's
 * first `window` code units finds every occurrence of every snippet at once,
 * in time proportional to the text plus the matches. Every candidate is
 * confirmed with `startsWith`, so a hash collision can never produce a match.
 */

export interface Found {
  readonly start: number
  readonly occurrences: number
}

/** Snippets shorter than this are searched with indexOf (their prefixes would be too common). */
const minWindow = 8
const maxWindow = 32

const countWithIndexOf = (text: string, snippet: string): Found | undefined => {
  const start = text.indexOf(snippet)
  if (start === -1) return undefined
  let occurrences = 1
  for (let at = text.indexOf(snippet, start + 1); at !== -1; at = text.indexOf(snippet, at + 1)) occurrences++
  return { start, occurrences }
}

const BASE = 0x01000193

/**
 * Whether one pass is expected to beat an indexOf scan per snippet. Measured on
 * 16 MiB of text: a pass costs about 30 indexOf-and-count scans, whatever the
 * number of snippets (docs/performance.md).
 */
const worthOnePass = (text: string, snippets: ReadonlyArray<string>) => snippets.length >= 32 && text.length >= 64 * 1024

export const searchAll = (text: string, snippets: ReadonlyArray<string>): Array<Found | undefined> => {
  const results: Array<Found | undefined> = new Array(snippets.length)
  const long: Array<number> = []
  const onePass = worthOnePass(text, snippets)
  snippets.forEach((snippet, i) => {
    if (onePass && snippet.length >= minWindow) long.push(i)
    else results[i] = countWithIndexOf(text, snippet)
  })
  if (long.length === 0) return results

  let window = maxWindow
  for (const i of long) window = Math.min(window, snippets[i]!.length)

  const hashPrefix = (s: string) => {
    let h = 0
    for (let j = 0; j < window; j++) h = (Math.imul(h, BASE) + s.charCodeAt(j)) | 0
    return h
  }
  // Open-addressing set of prefix hashes, and the snippets behind each hash.
  let size = 16
  while (size < long.length * 4) size <<= 1
  const mask = size - 1
  const table = new Int32Array(size)
  const used = new Uint8Array(size)
  const byHash = new Map<number, Array<number>>()
  for (const i of long) {
    const h = hashPrefix(snippets[i]!)
    const group = byHash.get(h)
    if (group !== undefined) {
      group.push(i)
      continue
    }
    byHash.set(h, [i])
    let slot = (h ^ (h >>> 15)) & mask
    while (used[slot] === 1) slot = (slot + 1) & mask
    used[slot] = 1
    table[slot] = h
  }

  let outFactor = 1
  for (let j = 1; j < window; j++) outFactor = Math.imul(outFactor, BASE)

  const first = new Int32Array(snippets.length).fill(-1)
  const counts = new Int32Array(snippets.length)
  const n = text.length
  if (n >= window) {
    let h = 0
    for (let j = 0; j < window; j++) h = (Math.imul(h, BASE) + text.charCodeAt(j)) | 0
    for (let pos = 0; ; pos++) {
      let slot = (h ^ (h >>> 15)) & mask
      while (used[slot] === 1) {
        if (table[slot] === h) {
          for (const i of byHash.get(h)!) {
            if (text.startsWith(snippets[i]!, pos)) {
              if (first[i] === -1) first[i] = pos
              counts[i]!++
            }
          }
          break
        }
        slot = (slot + 1) & mask
      }
      if (pos + window >= n) break
      h = (Math.imul(h - Math.imul(text.charCodeAt(pos), outFactor), BASE) + text.charCodeAt(pos + window)) | 0
    }
  }
  for (const i of long) results[i] = first[i] === -1 ? undefined : { start: first[i]!, occurrences: counts[i]! }
  return results
}
