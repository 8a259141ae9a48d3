// DuckDB's own engine (npm @duckdb/node-api, installed by make deps into
// tests/tools) reading tracepp's export without conversion: each argument
// TABLE=DDL_FILE=DATA_FILE creates TABLE from the DDL (tracepp export
// --schema=duckdb) and loads DATA_FILE into it with COPY: CSV with its
// header line ("" an empty string, not NULL) or JSON lines, by the file's
// extension. Then each line of stdin is a query, answered as one JSON
// array of row arrays per line, values as text (a UBIGINT may not fit a
// double).
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(join(dirname(fileURLToPath(import.meta.url)), 'tools', 'package.json'));
const { DuckDBInstance } = require('@duckdb/node-api');

const db = await DuckDBInstance.create(':memory:');
const c = await db.connect();
for (const arg of process.argv.slice(2)) {
  const [table, ddl, data] = arg.split('=');
  await c.run(readFileSync(ddl, 'utf8').replace(/^CREATE TABLE \w+/, `CREATE TABLE ${table}`));
  const how = data.endsWith('.csv') ? "(FORMAT csv, HEADER true, allow_quoted_nulls false)" : "(FORMAT json)";
  await c.run(`COPY ${table} FROM '${data.replace(/'/g, "''")}' ${how}`);
}
for (const q of readFileSync(0, 'utf8').split('\n').filter((l) => l.trim())) {
  const r = await c.runAndReadAll(q);
  console.log(JSON.stringify(r.getRows().map((row) => row.map((v) => (v === null ? null : String(v))))));
}
