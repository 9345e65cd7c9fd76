"""run.py runs pandas code for traceexport's analysis test (traceexport/pandas_test.go).

Standard input is a job: {"runs": [{"name": "...", "setup": "<a loader>", "questions":
[{"name": "q1", "code": "..."}, ...]}, ...]}. Each run executes its setup, then each question's
code, in one namespace; the code leaves its answer, a data frame, in the variable named after the
question. Standard output is {"<run>/<question>": {"columns": [...], "rows": [[...], ...]}}, or
{"<run>/<question>": {"error": "..."}} when the code raised.
"""
import json
import sys
import traceback

job = json.load(sys.stdin)
out = {}
for run in job["runs"]:
    namespace = {}
    try:
        exec(run["setup"], namespace)
    except Exception:
        for q in run["questions"]:
            out[run["name"] + "/" + q["name"]] = {"error": traceback.format_exc()}
        continue
    for q in run["questions"]:
        key = run["name"] + "/" + q["name"]
        try:
            exec(q["code"], namespace)
            frame = namespace[q["name"]]
            out[key] = {"columns": [str(c) for c in frame.columns],
                        "rows": json.loads(frame.to_json(orient="values", default_handler=str))}
        except Exception:
            out[key] = {"error": traceback.format_exc()}
json.dump(out, sys.stdout)
