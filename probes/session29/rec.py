"""rec.py SRC.jsonl DST.jsonl "run label": append SRC's records to DST with "run"."""
import json, sys
src, dst, label = sys.argv[1:4]
with open(dst, "a") as out:
    for line in open(src):
        if line.strip():
            r = json.loads(line); r["run"] = label
            out.write(json.dumps(r) + "\n")
