/**
 * The newest modification time under a directory of citegate's own build (`dist/`): whether a
 * bundle is older than the modules it was built from. Not for directories a user names: symbolic
 * links are not followed (a `Dirent` of a link is not a directory), so the walk ends with the tree.
 *
 * @internal
 */
import * as fs from "node:fs"
import * as path from "node:path"

/** The newest modification time of any file under `directory`. */
export const newestUnder = (directory: string): number => {
  let newest = 0
  for (const entry of fs.readdirSync(directory, { withFileTypes: true })) {
    const full = path.join(directory, entry.name)
    newest = Math.max(newest, entry.isDirectory() ? newestUnder(full) : fs.statSync(full).mtimeMs)
  }
  return newest
}
