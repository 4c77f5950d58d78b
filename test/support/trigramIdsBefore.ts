/**
 * The direct route of the trigram look-up (src/anchor/TrigramIds.ts) as it was before its chunk
 * body was written out: a loop over each chunk's units. The reference of
 * test/anchor.trigramIds.equivalence.test.ts.
 */
import type { TextIds } from "../../src/anchor/TrigramIds.js"

const chunk = 8
const maxDirectAlphabet = 63

/** The direct route's tables, or undefined past `maxDirectAlphabet` distinct code units (as before). */
export const directTablesBefore = (patterns: ReadonlyArray<string>, patternIds: ReadonlyArray<Uint16Array>) => {
  const codeOf = new Uint8Array(0x10000)
  let alphabet = 0
  for (const pattern of patterns) {
    for (let i = 0; i < pattern.length; i++) {
      const c = pattern.charCodeAt(i)
      if (codeOf[c] !== 0) continue
      if (alphabet === maxDirectAlphabet) return undefined
      codeOf[c] = ++alphabet
    }
  }
  const width = Math.max(1, 32 - Math.clz32(alphabet))
  const idOf = new Uint16Array(1 << (3 * width))
  patterns.forEach((pattern, k) => {
    const ids = patternIds[k]!
    for (let i = 0; i + 3 <= pattern.length; i++) {
      const key = (((codeOf[pattern.charCodeAt(i)]! << width) | codeOf[pattern.charCodeAt(i + 1)]!) << width) |
        codeOf[pattern.charCodeAt(i + 2)]!
      idOf[key] = ids[i]!
    }
  })
  return { codeOf, idOf, width }
}

/** The ids and packed chunk counts of `text` (at least 3 code units) by the loop over each chunk's units. */
export const directIdsBefore = (text: string, tables: NonNullable<ReturnType<typeof directTablesBefore>>, bits: Int32Array): TextIds => {
  const { codeOf, idOf, width } = tables
  const keyMask = (1 << (3 * width)) - 1
  const count = text.length - 2
  const ids = new Uint16Array(count)
  const chunks = Math.ceil(count / chunk)
  const packed = new Int32Array(chunks)
  let key = (codeOf[text.charCodeAt(0)]! << width) | codeOf[text.charCodeAt(1)]!
  for (let j = 0, i = 0; j < chunks; j++) {
    let sum = 0
    for (const end = Math.min(i + chunk, count); i < end; i++) {
      key = ((key << width) | codeOf[text.charCodeAt(i + 2)]!) & keyMask
      const id = idOf[key]!
      ids[i] = id
      sum += bits[id]!
    }
    packed[j] = sum
  }
  return { ids, packed }
}
