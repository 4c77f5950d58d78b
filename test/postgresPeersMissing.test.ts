/**
 * An application that imports `citegate/PostgresStore` without installing the store's optional
 * peers (`@effect/sql`, `@effect/sql-pg`): the import succeeds, and using the store fails with the
 * typed `StorePackageMissing`, naming what to install, not with ERR_MODULE_NOT_FOUND at load time.
 *
 * Real resolution, no hook: the compiled package is copied into a fresh application's node_modules
 * beside every other installed package (linked), all but the store's peers and the `pg` driver.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { fixturePath, tempDirectory } from "./support.js"

const root = fixturePath("..")
const peer = (scope: string, name: string) =>
  (scope === "@effect" && (name === "sql" || name === "sql-pg")) || (scope === "" && (name === "pg" || name.startsWith("pg-")))

/** A fresh application whose node_modules holds citegate (dist/ and package.json) and every package but the peers. */
const applicationWithoutPeers = Effect.gen(function*() {
  const app = path.join(yield* tempDirectory, "app")
  const modules = path.join(app, "node_modules")
  yield* Effect.promise(async () => {
    const citegate = path.join(modules, "citegate")
    await fsp.mkdir(citegate, { recursive: true })
    await fsp.cp(path.join(root, "dist"), path.join(citegate, "dist"), {
      recursive: true,
      filter: (source) => !source.includes(`${path.sep}bundle`)
    })
    await fsp.copyFile(path.join(root, "package.json"), path.join(citegate, "package.json"))
    for (const entry of await fsp.readdir(path.join(root, "node_modules"), { withFileTypes: true })) {
      if (entry.name.startsWith(".")) continue
      if (entry.name.startsWith("@")) {
        await fsp.mkdir(path.join(modules, entry.name), { recursive: true })
        for (const name of await fsp.readdir(path.join(root, "node_modules", entry.name))) {
          if (!peer(entry.name, name)) {
            await fsp.symlink(path.join(root, "node_modules", entry.name, name), path.join(modules, entry.name, name))
          }
        }
      } else if (!peer("", entry.name)) {
        await fsp.symlink(path.join(root, "node_modules", entry.name), path.join(modules, entry.name))
      }
    }
    await fsp.writeFile(path.join(app, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }))
    await fsp.writeFile(path.join(app, "main.js"), main)
  })
  return app
})

// Opens a run, then migrates, with the store's own layers; prints what each failed with.
const main = `
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { StorePackageMissing } from "citegate/Errors"
import * as PostgresStore from "citegate/PostgresStore"

const url = "postgres://nobody@127.0.0.1:1/none"
const shown = (e) => ({ tag: e._tag, typed: e instanceof StorePackageMissing, missing: e.missing, install: e.install, message: e.message })
const open = await Effect.runPromise(Effect.flip(Effect.scoped(Layer.build(PostgresStore.layerUrl({ url, run: "q3" })))))
const migrate = await Effect.runPromise(Effect.flip(PostgresStore.migrate.pipe(Effect.provide(PostgresStore.layerClient({ url })))))
process.stdout.write(JSON.stringify({ open: shown(open), migrate: shown(migrate), roles: [PostgresStore.captureRole, PostgresStore.verifierRole] }))
`

const run = (cwd: string) =>
  Effect.async<{ code: number | null; stdout: string; stderr: string }>((resume) => {
    const child = spawn(process.execPath, ["main.js"], { cwd, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    child.on("close", (code) => resume(Effect.succeed({ code, stdout, stderr })))
  })

describe("citegate/PostgresStore without its optional peers", () => {
  it.scopedLive("imports; opening a run and migrating fail with StorePackageMissing naming the packages to install", () =>
    Effect.gen(function*() {
      const app = yield* applicationWithoutPeers
      // The peers really are absent from this application.
      const resolvable = yield* Effect.promise(() =>
        fsp.access(path.join(app, "node_modules", "@effect", "sql-pg")).then(() => true, () => false)
      )
      assert.isFalse(resolvable)
      const ran = yield* run(app)
      assert.strictEqual(ran.code, 0, ran.stderr)
      assert.notInclude(ran.stderr, "ERR_MODULE_NOT_FOUND")
      const out = JSON.parse(ran.stdout) as Record<string, unknown>
      const expected = {
        tag: "StorePackageMissing",
        typed: true,
        missing: "@effect/sql",
        install: ["@effect/sql", "@effect/sql-pg"],
        message: "The PostgreSQL store needs the optional peer dependencies @effect/sql and @effect/sql-pg, " +
          "and @effect/sql is not installed: npm install @effect/sql @effect/sql-pg"
      }
      assert.deepStrictEqual(out, { open: expected, migrate: expected, roles: ["citegate_capture", "citegate_verifier"] })
    }), 60_000)
})
