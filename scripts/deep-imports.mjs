/**
 * Rewrites barrel imports of Effect packages into deep imports, so that a
 * consumer of the library loads only the modules it uses (importing the
 * `effect` barrel alone evaluates every one of its 170-odd modules):
 *
 *   import { Effect, Schema, pipe } from "effect"
 * becomes
 *   import * as Effect from "effect/Effect"
 *   import * as Schema from "effect/Schema"
 *   import { pipe } from "effect/Function"
 *
 * Which module each name comes from is read from the installed barrel
 * (node_modules/<package>/dist/esm/index.js), so the rewrite follows the
 * installed version. Aliases (`Schema as S`) and `type` imports are kept.
 * Idempotent: run it again after merging, it changes only what is new.
 *
 *   node scripts/deep-imports.mjs [--check] [DIR|FILE …]   (default: src)
 *
 * --check changes nothing and exits 1 if any file still imports a barrel.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), "..")
const packages = ["effect", "@effect/platform", "@effect/platform-node", "@effect/cli"]

/** name → { module, namespace } for one package, from its ES module barrel. */
const barrelOf = (pkg) => {
  const file = path.join(root, "node_modules", pkg, "dist", "esm", "index.js")
  if (!fs.existsSync(file)) return undefined
  const text = fs.readFileSync(file, "utf8").replace(/\/\*[\s\S]*?\*\//g, "").replace(/\/\/.*$/gm, "")
  const names = new Map()
  for (const m of text.matchAll(/export\s*\*\s*as\s+(\w+)\s+from\s*"\.\/([\w/]+)\.js"/g)) {
    names.set(m[1], { module: m[2], namespace: true })
  }
  for (const m of text.matchAll(/export\s*\{([^}]*)\}\s*from\s*"\.\/([\w/]+)\.js"/g)) {
    for (const part of m[1].split(",").map((p) => p.trim()).filter(Boolean)) {
      const [imported, exported = imported] = part.split(/\s+as\s+/)
      names.set(exported, { module: m[2], namespace: false, imported })
    }
  }
  return names
}

const barrels = new Map(packages.map((pkg) => [pkg, barrelOf(pkg)]).filter(([, names]) => names !== undefined))

const pattern = new RegExp(
  String.raw`^import(\s+type)?\s*\{([^}]*)\}\s*from\s*"(` +
    [...barrels.keys()].map((p) => p.replace(/[/.]/g, "\\$&")).join("|") +
    String.raw`)"(;?)[ \t]*(?:\n|$)`,
  "gm"
)

/** The deep imports replacing one barrel import, or an error naming what is unknown. */
const rewrite = (file, typeOnlyAll, body, pkg, semicolon) => {
  const names = barrels.get(pkg)
  const lines = []
  const named = new Map()
  for (const raw of body.split(",").map((s) => s.trim()).filter(Boolean)) {
    const typeOnly = typeOnlyAll || /^type\s+/.test(raw)
    const [name, local = name] = raw.replace(/^type\s+/, "").split(/\s+as\s+/).map((s) => s.trim())
    const entry = names.get(name)
    if (entry === undefined) throw new Error(`${file}: "${name}" is not exported by the ${pkg} barrel`)
    if (entry.namespace) {
      lines.push(`import${typeOnly ? " type" : ""} * as ${local} from "${pkg}/${entry.module}"${semicolon}`)
    } else {
      const specifier = `${typeOnly && !typeOnlyAll ? "type " : ""}${entry.imported}${entry.imported === local ? "" : ` as ${local}`}`
      const list = named.get(entry.module) ?? []
      list.push(specifier)
      named.set(entry.module, list)
    }
  }
  for (const [module, list] of named) {
    lines.push(`import${typeOnlyAll ? " type" : ""} { ${list.join(", ")} } from "${pkg}/${module}"${semicolon}`)
  }
  return lines
}

const transform = (file, text) => {
  const existing = new Set(text.split("\n"))
  return text.replace(pattern, (_all, typeOnly, body, pkg, semicolon) => {
    const lines = rewrite(file, typeOnly !== undefined, body, pkg, semicolon).filter((line) => !existing.has(line))
    lines.forEach((line) => existing.add(line))
    return lines.map((line) => `${line}\n`).join("")
  })
}

const filesUnder = (target) => {
  const stat = fs.statSync(target)
  if (stat.isFile()) return /\.(m|c)?tsx?$/.test(target) && !target.endsWith(".d.ts") ? [target] : []
  return fs.readdirSync(target).sort().flatMap((entry) => filesUnder(path.join(target, entry)))
}

const args = process.argv.slice(2)
const check = args.includes("--check")
const targets = args.filter((a) => a !== "--check")
const files = (targets.length > 0 ? targets : [path.join(root, "src")]).flatMap(filesUnder)
let changed = 0
try {
  for (const file of files) {
    const before = fs.readFileSync(file, "utf8")
    const after = transform(path.relative(root, file), before)
    if (after === before) continue
    changed++
    if (check) process.stdout.write(`${path.relative(root, file)} imports an Effect barrel\n`)
    else fs.writeFileSync(file, after)
  }
} catch (error) {
  process.stderr.write(`deep-imports: ${error.message}\n`)
  process.exit(2)
}
process.stdout.write(`${check ? "would rewrite" : "rewrote"} ${changed} of ${files.length} files\n`)
if (check && changed > 0) process.exitCode = 1
