// run.mjs runs SQL in DuckDB for traceexport's analysis test (traceexport/duckdb_test.go).
// Standard input is a job, {"steps": [{"name": "...", "sql": "..."}, ...]}; every step runs in
// order in one in-memory database, and standard output is {"name": {"columns": [...], "rows":
// [[...], ...]}} per step, or {"name": {"error": "..."}} for a step DuckDB refused (the test
// decides whether that was expected). Values are as @duckdb/node-api gives them as JSON: BIGINT
// and DECIMAL as strings, DOUBLE as numbers, NULL as null.
import { DuckDBInstance } from '@duckdb/node-api';

let input = '';
for await (const chunk of process.stdin) {
  input += chunk;
}
const job = JSON.parse(input);
const instance = await DuckDBInstance.create(':memory:');
const connection = await instance.connect();
const out = {};
for (const step of job.steps) {
  try {
    const reader = await connection.runAndReadAll(step.sql);
    out[step.name] = { columns: reader.columnNames(), rows: reader.getRowsJson() };
  } catch (err) {
    out[step.name] = { error: String(err && err.message ? err.message : err) };
  }
}
process.stdout.write(JSON.stringify(out));
