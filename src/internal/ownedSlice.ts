/**
 * A piece of a capture text that a result or an error keeps: its own copy.
 *
 * V8 makes `text.slice(start, end)` of 13 or more code units a view of the whole text, so an
 * excerpt of 60 characters kept in a verified report or a typed error would keep its whole
 * capture (up to the size cap) alive for as long as the report is kept. Joining a one-unit prefix
 * makes a new flat string of the excerpt alone; slicing the prefix off is a view of that copy.
 */
export const ownedSlice = (text: string, start: number, end: number): string => {
  const piece = text.slice(start, end)
  return piece.length < 13 ? piece : (" " + piece).slice(1)
}
