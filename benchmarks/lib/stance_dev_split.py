"""Splits IBM Debater Claim Stance training qrels into fitting topics and the last N topics (by id),
held out as dev topics (the set has no dev split). Prints which topics are dev.

    stance_dev_split.py TRAIN_QRELS N FIT_OUT DEV_OUT
"""
import sys
path, n, fit_path, dev_path = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
lines = open(path).read().splitlines()
header, rows = lines[0], [l for l in lines[1:] if l.strip()]
topic = lambda row: row.split("\t")[0].rsplit("-", 1)[0]
topics = sorted({topic(r) for r in rows}, key=lambda t: int(t.lstrip("t")) if t.lstrip("t").isdigit() else t)
if not 0 < n < len(topics):
    sys.exit(f"--dev-topics must be between 1 and {len(topics) - 1}, got {n}")
dev = set(topics[-n:])
open(fit_path, "w").write("\n".join([header] + [r for r in rows if topic(r) not in dev]) + "\n")
open(dev_path, "w").write("\n".join([header] + [r for r in rows if topic(r) in dev]) + "\n")
print(f"dev topics {' '.join(t for t in topics if t in dev)} of {len(topics)} training topics")
