/**
 * The suffix index as it was before its look-up carried the matched lengths of its bounds: kept
 * verbatim (only this comment and the import path differ) as the reference the equivalence tests
 * compare `find` against (test/suffixIndex.test.ts).
 */
import type { Found } from "../../src/internal/multiSearch.js"

/** Suffix-array positions per block of the range-minimum table: a query scans at most two partial blocks. */
const block = 64

/** A built index: lookups only. */
export interface SuffixIndex {
  /** The first occurrence of `pattern` and how many there are, counted up to `limit` (as `countUpTo`). */
  readonly find: (pattern: string, limit: number) => Found | undefined
  /** What it holds in memory, in bytes. */
  readonly bytes: number
}

const levels = (blocks: number) => {
  let count = 1
  while ((1 << count) <= blocks) count++
  return count
}

/** Bytes an index of a text of `n` code units holds: the array, the block minima and their sparse table. */
export const indexBytes = (n: number): number => {
  const blocks = Math.ceil(n / block)
  return 4 * n + 4 * blocks * levels(blocks) + 256
}

/** Sparse table over the minima of each block of `sa`: table[j][b] = min of blocks b .. b + 2^j - 1. */
const rangeMinima = (sa: Int32Array): Array<Int32Array> => {
  const blocks = Math.ceil(sa.length / block)
  const base = new Int32Array(blocks)
  for (let b = 0; b < blocks; b++) {
    let min = 0x7fffffff
    const end = Math.min(sa.length, (b + 1) * block)
    for (let i = b * block; i < end; i++) if (sa[i]! < min) min = sa[i]!
    base[b] = min
  }
  const table = [base]
  for (let j = 1; (1 << j) <= blocks; j++) {
    const prev = table[j - 1]!
    const half = 1 << (j - 1)
    const next = new Int32Array(blocks - (1 << j) + 1)
    for (let b = 0; b < next.length; b++) next[b] = Math.min(prev[b]!, prev[b + half]!)
    table.push(next)
  }
  return table
}

/** Lookups over a finished array. */
const makeIndex = (text: string, sa: Int32Array): SuffixIndex => {
  const n = text.length
  const table = rangeMinima(sa)
  const scan = (from: number, to: number, min: number) => {
    for (let i = from; i < to; i++) if (sa[i]! < min) min = sa[i]!
    return min
  }
  /** The least start in sa[lo, hi). */
  const minimum = (lo: number, hi: number): number => {
    const first = Math.ceil(lo / block)
    const last = Math.floor(hi / block) // blocks first .. last - 1 lie wholly inside
    if (first >= last) return scan(lo, hi, 0x7fffffff)
    let min = scan(lo, first * block, scan(last * block, hi, 0x7fffffff))
    const j = 31 - Math.clz32(last - first)
    const level = table[j]!
    min = Math.min(min, level[first]!, level[last - (1 << j)]!)
    return min
  }
  /** The suffix at `at` against `pattern` on the pattern's length: < 0, 0 (it starts with the pattern) or > 0. */
  const compare = (at: number, pattern: string): number => {
    const m = pattern.length
    const end = Math.min(m, n - at)
    for (let k = 0; k < end; k++) {
      const d = text.charCodeAt(at + k) - pattern.charCodeAt(k)
      if (d !== 0) return d
    }
    // The suffix ran out first: it is a proper prefix of the pattern, so it sorts before.
    return end < m ? -1 : 0
  }
  /** The first suffix-array position whose suffix compares at least `atLeast` (0: >= pattern, 1: > pattern). */
  const bound = (pattern: string, atLeast: number): number => {
    let lo = 0
    let hi = n
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (compare(sa[mid]!, pattern) < atLeast) lo = mid + 1
      else hi = mid
    }
    return lo
  }
  return {
    bytes: indexBytes(n),
    find: (pattern, limit) => {
      // The empty pattern occurs at every position, the end included (as the linear search counts it).
      if (pattern.length === 0) return { start: 0, occurrences: Math.min(n + 1, limit) }
      const lo = bound(pattern, 0)
      if (lo === n || compare(sa[lo]!, pattern) !== 0) return undefined
      const hi = bound(pattern, 1)
      return { start: minimum(lo, hi), occurrences: Math.min(hi - lo, limit) }
    }
  }
}

/** Small inputs: sorted by comparison (SA-IS needs at least three symbols to have work to do). */
const naiveSort = (s: Int32Array): Int32Array => {
  const n = s.length
  const order = Array.from({ length: n }, (_, i) => i)
  order.sort((a, b) => {
    for (; a < n && b < n; a++, b++) if (s[a] !== s[b]) return s[a]! - s[b]!
    return a === n ? -1 : 1
  })
  return Int32Array.from(order)
}

/**
 * The suffix array of `s` (symbols 0 .. upper) by induced sorting (SA-IS; Nong, Zhang and Chan
 * 2009, in the shape of the AtCoder Library's `sa_is`): linear time. It recurses on the reduced
 * string of LMS substrings, at most half as long, so the depth is at most log2 n.
 */
const sais = (s: Int32Array, upper: number): Int32Array => {
  const n = s.length
  if (n < 8) return naiveSort(s)
  const sa = new Int32Array(n)
  // ls[i]: suffix i is S-type (smaller than suffix i + 1); the last is L-type.
  const ls = new Uint8Array(n)
  for (let i = n - 2; i >= 0; i--) ls[i] = s[i] === s[i + 1] ? ls[i + 1]! : s[i]! < s[i + 1]! ? 1 : 0
  const sumL = new Int32Array(upper + 2)
  const sumS = new Int32Array(upper + 2)
  for (let i = 0; i < n; i++) {
    if (ls[i] === 0) sumS[s[i]!]!++
    else sumL[s[i]! + 1]!++
  }
  for (let i = 0; i <= upper; i++) {
    sumS[i]! += sumL[i]!
    if (i < upper) sumL[i + 1]! += sumS[i]!
  }
  const buf = new Int32Array(upper + 2)
  const induce = (lms: Int32Array) => {
    sa.fill(-1)
    buf.set(sumS)
    for (let j = 0; j < lms.length; j++) {
      const d = lms[j]!
      if (d !== n) sa[buf[s[d]!]!++] = d
    }
    buf.set(sumL)
    sa[buf[s[n - 1]!]!++] = n - 1
    for (let i = 0; i < n; i++) {
      const v = sa[i]!
      if (v >= 1 && ls[v - 1] === 0) sa[buf[s[v - 1]!]!++] = v - 1
    }
    buf.set(sumL)
    for (let i = n - 1; i >= 0; i--) {
      const v = sa[i]!
      if (v >= 1 && ls[v - 1] === 1) sa[--buf[s[v - 1]! + 1]!] = v - 1
    }
  }
  const lmsMap = new Int32Array(n + 1).fill(-1)
  let m = 0
  for (let i = 1; i < n; i++) if (ls[i - 1] === 0 && ls[i] === 1) lmsMap[i] = m++
  const lms = new Int32Array(m)
  for (let i = 1, j = 0; i < n; i++) if (ls[i - 1] === 0 && ls[i] === 1) lms[j++] = i
  induce(lms)
  if (m > 0) {
    const sorted = new Int32Array(m)
    for (let i = 0, j = 0; i < n; i++) if (lmsMap[sa[i]!] !== -1) sorted[j++] = sa[i]!
    const rec = new Int32Array(m)
    let recUpper = 0
    rec[lmsMap[sorted[0]!]!] = 0
    for (let i = 1; i < m; i++) {
      let l = sorted[i - 1]!, r = sorted[i]!
      const endL = lmsMap[l]! + 1 < m ? lms[lmsMap[l]! + 1]! : n
      const endR = lmsMap[r]! + 1 < m ? lms[lmsMap[r]! + 1]! : n
      let same = true
      if (endL - l !== endR - r) same = false
      else {
        while (l < endL && s[l] === s[r]) {
          l++
          r++
        }
        if (l === n || s[l] !== s[r]) same = false
      }
      if (!same) recUpper++
      rec[lmsMap[sorted[i]!]!] = recUpper
    }
    const recSa = sais(rec, recUpper)
    for (let i = 0; i < m; i++) sorted[i] = lms[recSa[i]!]!
    induce(sorted)
  }
  return sa
}

/** Bytes held while building, at most: the text as symbols, the array, types, LMS maps, and the recursion (half as much again). */
export const buildBytes = (n: number): number => 2 * (4 * n + 4 * n + n + 4 * n + 8 * n) + 2 * 4 * 65537

/** The index of `text`, built in one call (linear time: about 0.2 s per Mi code units, measured in docs/performance.md). */
export const build = (text: string): SuffixIndex => {
  const n = text.length
  const s = new Int32Array(n)
  for (let i = 0; i < n; i++) s[i] = text.charCodeAt(i)
  return makeIndex(text, sais(s, 65535))
}
