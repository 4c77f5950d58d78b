/**
 * `@effect/sql-pg` is an optional peer: no entry but `citegate/PostgresStore` may import it, so an
 * application without a database never needs it installed. Checked on the import graph esbuild
 * resolves from each entry's sources (packages left external, so every package import is listed).
 */
import { assert, it } from "@effect/vitest"
import { Effect } from "effect"
import * as esbuild from "esbuild"
import * as fs from "node:fs"
import * as path from "node:path"

const root = path.join(import.meta.dirname, "..")
const exportsMap = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")).exports as Record<
  string,
  string | { readonly source: string }
>

const packagesImportedBy = (entry: string) =>
  Effect.promise(async () => {
    const result = await esbuild.build({
      entryPoints: [path.join(root, entry)],
      bundle: true,
      write: false,
      metafile: true,
      platform: "node",
      format: "esm",
      packages: "external",
      logLevel: "silent"
    })
    return new Set(Object.values(result.metafile.outputs).flatMap((output) => output.imports.map((i) => i.path)))
  })

const databasePackage = (name: string) => name === "pg" || name.startsWith("pg/") || name.startsWith("@effect/sql-pg")

it.live("only citegate/PostgresStore imports @effect/sql-pg or pg; every other entry, the root included, does not", () =>
  Effect.gen(function*() {
    const entries = Object.entries(exportsMap).flatMap(([name, target]) =>
      typeof target === "object" ? [[name, target.source] as const] : []
    )
    assert.isAbove(entries.length, 5)
    for (const [name, source] of entries) {
      const imported = [...(yield* packagesImportedBy(source))].filter(databasePackage)
      if (name === "./PostgresStore") assert.include(imported, "@effect/sql-pg/PgClient", name)
      else assert.deepStrictEqual(imported, [], `${name} must not load the database driver`)
    }
  }), 60_000)
