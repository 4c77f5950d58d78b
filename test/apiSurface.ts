/**
 * The public API as a list of names: for the package root and every subpath export of package.json
 * (through its `source` path), each exported name with its kind. Names come from the TypeScript
 * checker (so type-only exports count), kinds of values from the loaded module (a TaggedError class,
 * a Schema, a Context tag, a Layer, a function, …). A namespace re-export of the root (`Capture`) is
 * listed with the module it names; a module reached only that way gets a section of its own.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { readFileSync } from "node:fs"
import * as path from "node:path"
import ts from "typescript"

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..")

interface PackageJson {
  readonly name: string
  readonly exports: Record<string, string | { readonly source?: string }>
}

/** Each public entry point: its specifier (`citegate`, `citegate/Errors`) and its source file. */
export const entryPoints = (): ReadonlyArray<{ readonly specifier: string; readonly source: string }> => {
  const pkg = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")) as PackageJson
  return Object.entries(pkg.exports).flatMap(([key, target]) =>
    typeof target === "string" || target.source === undefined
      ? []
      : [{ specifier: key === "." ? pkg.name : `${pkg.name}/${key.slice(2)}`, source: path.normalize(target.source) }]
  )
}

/** What a runtime value is, in one word. */
export const valueKind = (value: unknown): string => {
  if (Context.isTag(value)) return "tag"
  if (Layer.isLayer(value)) return "layer"
  if (Schema.isSchema(value)) {
    const prototype: unknown = (value as { readonly prototype?: unknown }).prototype
    return prototype instanceof Error ? "error-class" : "schema"
  }
  if (Effect.isEffect(value)) return "effect"
  if (typeof value === "function") {
    return /^class[\s{]/.test(Function.prototype.toString.call(value)) ? "class" : "function"
  }
  return value === null ? "const" : typeof value === "object" ? "object" : "const"
}

const typeKind = (symbol: ts.Symbol): string | undefined =>
  symbol.flags & ts.SymbolFlags.Interface
    ? "interface"
    : symbol.flags & ts.SymbolFlags.TypeAlias
    ? "type"
    : symbol.flags & ts.SymbolFlags.Enum
    ? "enum"
    : undefined

const relative = (file: string) => path.relative(root, file).split(path.sep).join("/")

/**
 * The surface as text, one section per entry point, one line per name (sorted): `name: kind[ + type]`.
 * `load` imports a source module (relative to the repository) and returns its namespace object.
 */
export const apiSurface = async (load: (source: string) => Promise<Record<string, unknown>>): Promise<string> => {
  const entries = entryPoints()
  const program = ts.createProgram(entries.map((e) => path.join(root, e.source)), {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    customConditions: ["source"],
    allowImportingTsExtensions: true,
    resolveJsonModule: true,
    noEmit: true,
    skipLibCheck: true,
    types: ["node"]
  })
  const checker = program.getTypeChecker()
  const sections: Array<{ readonly title: string; readonly source: string }> = entries.map((e) => ({
    title: `${e.specifier} (${e.source})`,
    source: e.source
  }))
  const seen = new Set(sections.map((s) => s.source))
  const out: Array<string> = []
  for (let i = 0; i < sections.length; i++) {
    const { source, title } = sections[i]!
    const file = program.getSourceFile(path.join(root, source))
    if (file === undefined) throw new Error(`${source}: not found`)
    const moduleSymbol = checker.getSymbolAtLocation(file)
    if (moduleSymbol === undefined) throw new Error(`${source}: not a module`)
    const runtime = await load(source)
    const lines = checker.getExportsOfModule(moduleSymbol).map((symbol) => {
      const name = symbol.getName()
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol
      if (target.flags & ts.SymbolFlags.ValueModule && target.valueDeclaration !== undefined && ts.isSourceFile(target.valueDeclaration)) {
        const named = relative(target.valueDeclaration.fileName)
        if (!seen.has(named)) {
          seen.add(named)
          sections.push({ title: `(namespace of the root) ${named}`, source: named })
        }
        return `${name}: namespace ${named}`
      }
      const kinds = [
        ...(name in runtime ? [valueKind(runtime[name])] : []),
        ...(typeKind(target) === undefined ? [] : [typeKind(target)!])
      ]
      return `${name}: ${kinds.length === 0 ? "type" : kinds.join(" + ")}`
    })
    // A runtime export the checker does not see would be a surprise worth seeing.
    const missing = Object.keys(runtime).filter((name) => !lines.some((line) => line.startsWith(`${name}: `)))
    out.push(`## ${title}`, ...[...lines, ...missing.map((name) => `${name}: ${valueKind(runtime[name])} (runtime only)`)].sort(), "")
  }
  return out.join("\n")
}
