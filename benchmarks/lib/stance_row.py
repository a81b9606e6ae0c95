"""One JSON row of a `counterpoint stance` table: the mean-over-templates P@R, Hard@R, Semi@R, Easy@R
and nDCG@10, and the word-ablation RIS / RCS / DI per class when the table has them.

    stance_row.py LABEL SPLIT COMMAND SECONDS TABLE
"""
import json, sys
label, split, command, seconds, table = sys.argv[1:6]
row = {"label": label, "set": "ibm-claim-stance", "split": split, "kind": "eval", "command": command,
       "seconds": int(seconds)}
lines = table.splitlines()
mean = next(l for l in lines if l.startswith("mean over templates"))
for key, value in zip(["P@R", "Hard@R", "Semi@R", "Easy@R", "ndcg@10"], mean.split()[-5:]):
    row[key] = float(value)
for l in lines:  # word ablation rows: class docs RIS (std) RCS (std) DI (std)
    f = l.split()
    if len(f) == 8 and f[0] in ("positive", "hard", "semi-hard", "easy") and f[1].isdigit():
        row[f"RIS {f[0]}"], row[f"RCS {f[0]}"], row[f"DI {f[0]}"] = float(f[2]), float(f[4]), float(f[6])
print(json.dumps(row))
