/**
 * The PostgreSQL store's schema, as `@effect/sql` migrations loaded from code
 * (no migration files to ship or find at run time). Each migration runs once,
 * in a transaction, recorded in `citegate_migrations`; never edit one that has
 * shipped: add the next.
 *
 * What the schema guarantees by itself, whoever connects:
 * - one capture per (run, source): the primary key, so two writers racing for
 *   the same source cannot both succeed, in one process or in many;
 * - append-only: a trigger refuses UPDATE, DELETE and TRUNCATE on every table
 *   (the owner too; only dropping or disabling the trigger gets round it);
 * - two group roles: `citegate_capture` may create runs and insert captures and
 *   bodies, and read nothing but run names and body digests; `citegate_verifier`
 *   may only read.
 *   Login roles are made members of them (docs/deployment.md).
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import { peers } from "./PostgresPeers.js"

/** The role capture workers log in as (through membership): INSERT only. */
export const captureRole = "citegate_capture"
/** The role verifying services log in as (through membership): SELECT only. */
export const verifierRole = "citegate_verifier"
/**
 * The role `run-pipeline serve --store` replicas log in as (through membership): capture and verify
 * (it is a member of both roles above), and keep the service's shared state: capture jobs, run events
 * and streamed answers' events, which expire and so may be updated and deleted.
 */
export const serviceRole = "citegate_service"
/** Where `@effect/sql`'s migrator records which migrations ran. */
export const migrationsTable = "citegate_migrations"

/** Creates a group role unless it exists: roles belong to the cluster, and another database may have made it. */
const ensureRole = (role: string) => `
DO $$
BEGIN
  CREATE ROLE ${role} NOLOGIN;
EXCEPTION WHEN duplicate_object OR unique_violation THEN
  NULL;
END
$$`

/**
 * A group role and what it may do: made unless it exists, made a member of `memberOf`, its tables
 * taken from PUBLIC, then each grant (`[privileges, tables, to]`, to the role itself by default).
 */
const groupRole = (role: string, options: {
  readonly memberOf?: ReadonlyArray<string>
  readonly tables: ReadonlyArray<string>
  readonly grants: ReadonlyArray<readonly [privileges: string, tables: ReadonlyArray<string>, to?: string]>
}): ReadonlyArray<string> => [
  ensureRole(role),
  ...(options.memberOf === undefined ? [] : [`GRANT ${options.memberOf.join(", ")} TO ${role}`]),
  `REVOKE ALL ON ${options.tables.join(", ")} FROM PUBLIC`,
  ...options.grants.map(([privileges, tables, to = role]) => `GRANT ${privileges} ON ${tables.join(", ")} TO ${to}`)
]

const appendOnly = (table: string) => [
  `CREATE TRIGGER ${table}_append_only BEFORE UPDATE OR DELETE ON ${table}
     FOR EACH ROW EXECUTE FUNCTION citegate_append_only()`,
  `CREATE TRIGGER ${table}_no_truncate BEFORE TRUNCATE ON ${table}
     FOR EACH STATEMENT EXECUTE FUNCTION citegate_append_only()`
]

const sha256Check = (column: string) => `CHECK (${column} ~ '^[0-9a-f]{64}$')`

/** Migration 1: runs, captures, bodies, the append-only trigger and the two roles. */
const initial: ReadonlyArray<string> = [
  // Records are read back as text converted from their bytes: only a UTF8 database converts (and
  // checks) them exactly; SQL_ASCII would pass invalid bytes through for the driver to replace.
  `DO $$
   BEGIN
     IF current_setting('server_encoding') <> 'UTF8' THEN
       RAISE EXCEPTION 'citegate needs a UTF8 database; this one is %', current_setting('server_encoding');
     END IF;
   END
   $$`,
  `CREATE TABLE citegate_runs (
     run text PRIMARY KEY CHECK (char_length(run) BETWEEN 1 AND 200),
     created_at timestamptz NOT NULL DEFAULT now()
   )`,
  // Body bytes, content-addressed: a capture that keeps its raw body names it by digest.
  `CREATE TABLE citegate_bodies (
     sha256 text PRIMARY KEY ${sha256Check("sha256")},
     bytes bytea NOT NULL,
     created_at timestamptz NOT NULL DEFAULT now()
   )`,
  // `record` is the record's canonical serialisation, byte for byte what the filesystem store writes;
  // `record_sha256` is the digest of those bytes, `sha256` the capture digest inside the record.
  `CREATE TABLE citegate_captures (
     run text NOT NULL REFERENCES citegate_runs (run),
     source text NOT NULL,
     record bytea NOT NULL,
     record_sha256 text NOT NULL ${sha256Check("record_sha256")},
     sha256 text NOT NULL ${sha256Check("sha256")},
     body_sha256 text REFERENCES citegate_bodies (sha256),
     created_at timestamptz NOT NULL DEFAULT now(),
     PRIMARY KEY (run, source)
   )`,
  `CREATE FUNCTION citegate_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     RAISE EXCEPTION 'citegate: % on % refused: captures are append-only', TG_OP, TG_TABLE_NAME
       USING ERRCODE = 'insufficient_privilege';
   END
   $$`,
  ...appendOnly("citegate_runs"),
  ...appendOnly("citegate_bodies"),
  ...appendOnly("citegate_captures"),
  ensureRole(captureRole),
  ensureRole(verifierRole),
  "REVOKE ALL ON citegate_runs, citegate_bodies, citegate_captures FROM PUBLIC",
  // Capture: create runs (and see their names, to open one), insert captures and bodies. Exclusivity
  // is the primary key's: an INSERT that collides fails, and needs no SELECT to find out.
  `GRANT SELECT, INSERT ON citegate_runs TO ${captureRole}`,
  `GRANT INSERT ON citegate_bodies, citegate_captures TO ${captureRole}`,
  // A body shared by two captures is inserted once (ON CONFLICT (sha256) DO NOTHING), which needs to
  // see the digests that exist: the digest column only, never a body's bytes.
  `GRANT SELECT (sha256) ON citegate_bodies TO ${captureRole}`,
  `GRANT SELECT ON citegate_runs, citegate_bodies, citegate_captures TO ${verifierRole}`
]

/**
 * Migration 2: what replicas of the service share. Not append-only: a job's lease is renewed, events
 * expire. Evidence stays in the append-only tables above; these hold progress, never captures.
 */
const replicas: ReadonlyArray<string> = [
  // One capture job per run started over HTTP; `epoch` grows with each claim, and fences every write
  // of a holder that lost its lease (its event inserts find another epoch and insert nothing).
  `CREATE TABLE citegate_jobs (
     run text PRIMARY KEY REFERENCES citegate_runs (run),
     owner text NOT NULL,
     state text NOT NULL CHECK (state IN ('queued', 'running', 'done')),
     holder text,
     epoch integer NOT NULL DEFAULT 0,
     lease_until timestamptz NOT NULL DEFAULT now(),
     created_at timestamptz NOT NULL DEFAULT now(),
     ended_at timestamptz
   )`,
  "CREATE INDEX citegate_jobs_pending ON citegate_jobs (created_at) WHERE state <> 'done'",
  `CREATE TABLE citegate_run_events (
     run text NOT NULL REFERENCES citegate_jobs (run) ON DELETE CASCADE,
     id integer NOT NULL CHECK (id >= 1),
     event text NOT NULL,
     PRIMARY KEY (run, id)
   )`,
  // A streamed answer: its producer's lease, the ids it retains (first_id .. last_id), their bytes.
  `CREATE TABLE citegate_streams (
     id text PRIMARY KEY,
     run text NOT NULL,
     holder text NOT NULL,
     lease_until timestamptz NOT NULL,
     first_id integer NOT NULL DEFAULT 1,
     last_id integer NOT NULL DEFAULT 0,
     bytes bigint NOT NULL DEFAULT 0,
     ended_at timestamptz,
     created_at timestamptz NOT NULL DEFAULT now()
   )`,
  `CREATE TABLE citegate_stream_events (
     stream text NOT NULL REFERENCES citegate_streams (id) ON DELETE CASCADE,
     id integer NOT NULL CHECK (id >= 1),
     event text NOT NULL,
     PRIMARY KEY (stream, id)
   )`,
  ...groupRole(serviceRole, {
    memberOf: [captureRole, verifierRole],
    tables: ["citegate_jobs", "citegate_run_events", "citegate_streams", "citegate_stream_events"],
    grants: [["SELECT, INSERT, UPDATE, DELETE", ["citegate_jobs", "citegate_run_events", "citegate_streams", "citegate_stream_events"]]]
  })
]

const statements = (list: ReadonlyArray<string>) =>
  Effect.flatMap(peers, ({ SqlClient }) =>
    Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.forEach(list, (statement) => sql.unsafe(statement), { discard: true })))

/** The role reviewers' services log in as (through membership): read captures, append review decisions. */
export const reviewerRole = "citegate_reviewer"

/**
 * Migration 2: the review log. One row per recorded decision, `seq` its place in the run's log
 * (assigned by the database: two writers never share one), the decision's canonical JSON in
 * `record`, append-only by the same trigger as captures. The reviewer role inserts decisions and
 * reads what a review needs; the verifier role may read decisions (renderings show them).
 */
const reviews: ReadonlyArray<string> = [
  `CREATE TABLE citegate_reviews (
     seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
     run text NOT NULL REFERENCES citegate_runs (run),
     record text NOT NULL CHECK (octet_length(record) <= 65536),
     created_at timestamptz NOT NULL DEFAULT now()
   )`,
  "CREATE INDEX citegate_reviews_run ON citegate_reviews (run, seq)",
  ...appendOnly("citegate_reviews"),
  ...groupRole(reviewerRole, {
    tables: ["citegate_reviews"],
    grants: [
      ["SELECT", ["citegate_runs", "citegate_bodies", "citegate_captures"]],
      ["SELECT, INSERT", ["citegate_reviews"]],
      ["SELECT", ["citegate_reviews"], verifierRole]
    ]
  })
]

/**
 * Migration 4: replicas of the service record review decisions (`POST /v1/runs/{id}/reviews` with
 * `serve --store`): the service role becomes a member of the reviewer role (read captures, append
 * decisions; the log stays append-only by its trigger).
 */
const serviceReviews: ReadonlyArray<string> = [`GRANT ${reviewerRole} TO ${serviceRole}`]

/**
 * Migration 5: signed attestations of captures (src/evidence/CaptureAttestation.ts), one per capture,
 * append-only by the same trigger: a capture worker inserts them (never reads them back), verifiers and
 * reviewers read them.
 */
const attestations: ReadonlyArray<string> = [
  `CREATE TABLE citegate_attestations (
     run text NOT NULL,
     source text NOT NULL,
     envelope text NOT NULL CHECK (octet_length(envelope) <= 65536),
     created_at timestamptz NOT NULL DEFAULT now(),
     PRIMARY KEY (run, source),
     FOREIGN KEY (run, source) REFERENCES citegate_captures (run, source)
   )`,
  ...appendOnly("citegate_attestations"),
  "REVOKE ALL ON citegate_attestations FROM PUBLIC",
  `GRANT INSERT ON citegate_attestations TO ${captureRole}`,
  `GRANT SELECT ON citegate_attestations TO ${verifierRole}`,
  `GRANT SELECT ON citegate_attestations TO ${reviewerRole}`
]

/** The migrations, by `<id>_<name>` (the key format `Migrator.fromRecord` reads). */
export const migrations = {
  "1_citegate_store": statements(initial),
  "2_citegate_reviews": statements(reviews),
  "3_citegate_replicas": statements(replicas),
  "4_citegate_service_reviews": statements(serviceReviews),
  "5_citegate_attestations": statements(attestations)
}
