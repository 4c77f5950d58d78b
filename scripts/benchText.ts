/**
 * The bench's captured text: deterministic pseudo-random prose (words and numbers, a sentence break
 * now and then), so every run and every bench script measures the same bytes.
 */
export const makeText = (seed: number, bytes: number): string => {
  const words = ["net", "sales", "units", "quarter", "inventory", "warehouse", "online", "orders", "returns", "rose",
    "fell", "by", "to", "of", "the", "in", "and", "2026", "Q3", "Q2", "per", "cent", "region", "north", "south"]
  let state = seed * 2654435761 >>> 0
  const next = () => (state = (state * 1664525 + 1013904223) >>> 0)
  const parts: Array<string> = []
  let size = 0
  while (size < bytes) {
    const word = next() % 7 === 0 ? String(next() % 100000) : words[next() % words.length]!
    const piece = next() % 13 === 0 ? `${word}.\n` : `${word} `
    parts.push(piece)
    size += piece.length
  }
  return parts.join("").slice(0, bytes)
}
